// Package k8s holds the test of the Kubernetes example (the manifests and
// the Dockerfile beside it): a module of its own, so that splitplan's
// module does not depend on the Kubernetes API packages.
package k8s
