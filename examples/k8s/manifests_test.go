package k8s

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// decode reads one manifest strictly into the Kubernetes API type v: an
// unknown or misspelt field is an error, as is a second document.
func decode(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^---`).Match(data) {
		t.Fatalf("%s: one object a file", name)
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

type manifests struct {
	pvc   corev1.PersistentVolumeClaim
	cm    corev1.ConfigMap
	study batchv1.Job
	merge batchv1.Job
}

func load(t *testing.T) *manifests {
	var m manifests
	decode(t, "pvc.yaml", &m.pvc)
	decode(t, "configmap.yaml", &m.cm)
	decode(t, "study-job.yaml", &m.study)
	decode(t, "merge-job.yaml", &m.merge)
	return &m
}

// arg returns the value after flag in args ("" if absent).
func arg(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// mountOf returns the path where c mounts volume name.
func mountOf(c corev1.Container, name string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m.MountPath
		}
	}
	return ""
}

// checkPod checks what every pod of the example needs: it runs as a
// non-root user, never restarts in place, its volumes resolve to the
// claim and the ConfigMap, and each container mounts the results.
func checkPod(t *testing.T, m *manifests, name string, spec corev1.PodSpec) {
	t.Helper()
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %q, want Never", name, spec.RestartPolicy)
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("%s: pods must run as a non-root user", name)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	if v := vols["results"]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != m.pvc.Name {
		t.Errorf("%s: volume results is not the claim %s", name, m.pvc.Name)
	}
	if v, ok := vols["study"]; ok && (v.ConfigMap == nil || v.ConfigMap.Name != m.cm.Name) {
		t.Errorf("%s: volume study is not the ConfigMap %s", name, m.cm.Name)
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, vm := range c.VolumeMounts {
			if _, ok := vols[vm.Name]; !ok {
				t.Errorf("%s/%s: mounts %s, which is no volume of the pod", name, c.Name, vm.Name)
			}
		}
		if mountOf(c, "results") != "/results" {
			t.Errorf("%s/%s: does not mount the results at /results", name, c.Name)
		}
		if c.Image != m.study.Spec.Template.Spec.Containers[0].Image {
			t.Errorf("%s/%s: image %s differs from the study's", name, c.Name, c.Image)
		}
		if len(c.Command) != 0 {
			t.Errorf("%s/%s: sets command; the image's entrypoint is splitplan", name, c.Name)
		}
	}
}

// TestManifests: the manifests decode strictly into the API types, and the
// fields that make the example work agree with each other.
func TestManifests(t *testing.T) {
	m := load(t)
	for _, n := range []string{m.pvc.Name, m.cm.Name, m.study.Name, m.merge.Name} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("name %q: %v", n, errs)
		}
	}
	if len(m.pvc.Spec.AccessModes) != 1 || m.pvc.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("the claim's access modes %v: every shard's pod writes to it, want ReadWriteMany", m.pvc.Spec.AccessModes)
	}
	want, err := os.ReadFile("../study/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	if m.cm.Data["study.toml"] != string(want) {
		t.Error("the ConfigMap's study.toml differs from examples/study/study.toml")
	}

	js := m.study.Spec
	if js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("the study Job is not Indexed")
	}
	if js.Completions == nil || js.Parallelism == nil || *js.Parallelism < 1 || *js.Parallelism > *js.Completions {
		t.Fatal("the study Job needs completions and 1 <= parallelism <= completions")
	}
	checkPod(t, m, "study", js.Template.Spec)
	if len(js.Template.Spec.Containers) != 1 {
		t.Fatalf("the study pod has %d containers, want 1", len(js.Template.Spec.Containers))
	}
	c := js.Template.Spec.Containers[0]
	if c.Args[0] != "study" || arg(c.Args, "--shard-index") != "$(JOB_COMPLETION_INDEX)" {
		t.Errorf("the shard is not JOB_COMPLETION_INDEX: %v", c.Args)
	}
	if n, err := strconv.Atoi(arg(c.Args, "--shards")); err != nil || int32(n) != *js.Completions {
		t.Errorf("--shards %q, completions %d: they must be equal", arg(c.Args, "--shards"), *js.Completions)
	}
	var indexEnv bool
	for _, e := range c.Env {
		if e.Name == "JOB_COMPLETION_INDEX" {
			indexEnv = e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
		}
	}
	if !indexEnv {
		t.Error("args use $(JOB_COMPLETION_INDEX) but the container does not define it from the completion-index annotation")
	}
	studyFile := c.Args[len(c.Args)-1]
	if dir, key := filepath.Split(studyFile); filepath.Clean(dir) != mountOf(c, "study") || m.cm.Data[key] == "" {
		t.Errorf("the study file %s is not a key of the ConfigMap mounted at %s", studyFile, mountOf(c, "study"))
	}
	out := arg(c.Args, "--out")
	if !strings.HasPrefix(out, "/results/") {
		t.Errorf("--out %s is not on the shared claim", out)
	}
	if mountOf(c, "tmp") != "/tmp" || c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the shard container should have a read-only root and a writable /tmp (each job's optimize writes there)")
	}

	ms := m.merge.Spec
	if ms.CompletionMode != nil && *ms.CompletionMode == batchv1.IndexedCompletion {
		t.Error("the merge Job should be one pod")
	}
	checkPod(t, m, "merge", ms.Template.Spec)
	if len(ms.Template.Spec.InitContainers) != 1 {
		t.Fatal("the merge Job's init container merges")
	}
	mc := ms.Template.Spec.InitContainers[0]
	n := len(mc.Args)
	if n < 4 || mc.Args[0] != "study" || mc.Args[1] != "merge" || mc.Args[n-1] != out || mc.Args[n-2] != studyFile {
		t.Errorf("merge args %v: want study merge ... %s %s", mc.Args, studyFile, out)
	}
	merged := arg(mc.Args, "--out")
	for _, pc := range ms.Template.Spec.Containers {
		if pc.Args[0] != "plot" || arg(pc.Args, "--merged") != merged {
			t.Errorf("%s: args %v: want plot ... --merged %s", pc.Name, pc.Args, merged)
		}
	}
}

// TestDockerfile: a multi-stage build of a static binary on a minimal base,
// run as a non-root user.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllSubmatch(data, -1)
	if len(froms) != 2 || !bytes.HasPrefix(froms[0][1], []byte("golang:")) || !bytes.HasPrefix(froms[1][1], []byte("gcr.io/distroless/static")) {
		t.Errorf("want a golang build stage and a distroless static final stage, have %q", froms)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "COPY --from=build", "USER 65532", `ENTRYPOINT ["/usr/local/bin/splitplan"]`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
}

// TestPodsLocally runs what the pods run, in order, with this repository's
// splitplan: every shard of the Indexed Job (its args with
// $(JOB_COMPLETION_INDEX) = 0..completions−1), then the merge Job's init
// container and containers, /results and /study mapped to temporary
// directories; the merge must find every job done and the figures be
// written.
func TestPodsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds splitplan and runs a 27-job study")
	}
	m := load(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "splitplan")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	results, studyDir := filepath.Join(tmp, "results"), filepath.Join(tmp, "study")
	os.MkdirAll(results, 0o755)
	os.MkdirAll(studyDir, 0o755)
	for k, v := range m.cm.Data {
		os.WriteFile(filepath.Join(studyDir, k), []byte(v), 0o644)
	}
	run := func(name string, args []string, index int) string {
		t.Helper()
		mapped := make([]string, len(args))
		for i, a := range args {
			a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(index))
			if rest, ok := strings.CutPrefix(a, "/results/"); ok {
				a = filepath.Join(results, rest)
			} else if rest, ok := strings.CutPrefix(a, "/study/"); ok {
				a = filepath.Join(studyDir, rest)
			}
			mapped[i] = a
		}
		cmd := exec.Command(bin, mapped...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, mapped, err, out)
		}
		return string(out)
	}
	c := m.study.Spec.Template.Spec.Containers[0]
	for k := 0; k < int(*m.study.Spec.Completions); k++ {
		if out := run("shard", c.Args, k); !strings.Contains(out, "0 failed") {
			t.Errorf("shard %d: %s", k, out)
		}
	}
	mc := m.merge.Spec.Template.Spec.InitContainers[0]
	if out := run("merge", mc.Args, 0); !strings.Contains(out, "study: 27 of 27 jobs done") {
		t.Errorf("merge: %s", out)
	}
	for _, pc := range m.merge.Spec.Template.Spec.Containers {
		run(pc.Name, pc.Args, 0)
	}
	for _, f := range []string{"study.csv", "study.json", "study.png", "study-winners.png"} {
		if st, err := os.Stat(filepath.Join(results, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}
