package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestServe: the page's form, a run with its values, bad input answered
// 400 with the command's message, an oversized body 413, other methods
// 405, and a run cancelled when its request goes away.
func TestServe(t *testing.T) {
	h := newServeHandler().(*serveHandler)
	ts := httptest.NewServer(h)
	defer ts.Close()
	get := func(resp *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get(http.Get(ts.URL))
	if code != 200 || !strings.Contains(body, `<form method="post"`) || !strings.Contains(body, `name="rps" value="70"`) {
		t.Fatalf("GET /: %d %q", code, body)
	}
	form := url.Values{"goal": {"cost"}, "rps": {"5"}, "designs": {"Baseline-H100,HH"}, "workload": {"coding"}}
	code, body = get(http.PostForm(ts.URL, form))
	if code != 200 || !strings.Contains(body, `id="answer"`) || !strings.Contains(body, `name="rps" value="5"`) || !strings.Contains(body, "optimize --goal cost") {
		t.Fatalf("POST a run: %d %.400q", code, body)
	}
	// With a confidence the page is the robust report.
	robust := url.Values{"goal": {"cost"}, "rps": {"5"}, "designs": {"HH"}, "workload": {"coding"}, "confidence": {"0.8"}, "scenarios": {"4"}}
	code, body = get(http.PostForm(ts.URL, robust))
	if code != 200 || !strings.Contains(body, "Robust at confidence 0.8:") || !strings.Contains(body, `<figure id="certainty">`) || !strings.Contains(body, `name="confidence" value="0.8"`) {
		t.Fatalf("POST a robust run: %d %.600q", code, body)
	}
	// "yes" asks for the sensitivity analysis: the page has the tornado;
	// a word neither yes nor no is bad input naming the flag.
	sens := url.Values{"goal": {"cost"}, "rps": {"5"}, "designs": {"HH"}, "workload": {"coding"}, "sensitivity": {"yes"}}
	code, body = get(http.PostForm(ts.URL, sens))
	if code != 200 || !strings.Contains(body, `<figure id="tornado">`) || !strings.Contains(body, `name="sensitivity" value="yes"`) {
		t.Fatalf("POST a sensitivity run: %d %.600q", code, body)
	}
	sens.Set("sensitivity", "maybe")
	code, body = get(http.PostForm(ts.URL, sens))
	if code != 400 || !strings.Contains(body, "sensitivity") {
		t.Errorf("POST sensitivity=maybe: %d %.600q", code, body)
	}
	// The check's length is a field too, its default the command's.
	if _, page := get(http.Get(ts.URL)); !strings.Contains(page, `name="verify" value="15m"`) {
		t.Errorf("GET /: no verify field with optimize's default 15m")
	}
	bad := url.Values{"goal": {"cost"}, "rps": {"5"}, "designs": {"HH"}, "verify": {"soon"}}
	code, body = get(http.PostForm(ts.URL, bad))
	if code != 400 || !strings.Contains(body, "--verify") {
		t.Errorf("POST verify=soon: %d %.600q", code, body)
	}
	form.Set("rps", "-3")
	code, body = get(http.PostForm(ts.URL, form))
	if code != 400 || !strings.Contains(body, `id="error"`) || !strings.Contains(body, "--rps") {
		t.Errorf("POST --rps -3: %d %.600q", code, body)
	}
	code, _ = get(http.Post(ts.URL, "application/x-www-form-urlencoded", strings.NewReader("rps="+strings.Repeat("9", serveMaxBody))))
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized body: %d, want 413", code)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	code, _ = get(http.DefaultClient.Do(req))
	if code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d, want 405", code)
	}
	code, _ = get(http.Get(ts.URL + "/x"))
	if code != 404 {
		t.Errorf("GET /x: %d, want 404", code)
	}

	// A search of several seconds, abandoned after 300 ms: the handler
	// lets go of the search lock long before the search would have ended.
	long := url.Values{"goal": {"throughput"}, "power-budget": {"455"}, "workload": {"conversation"}, "rps": {""}}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(long.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cancel()
	<-errc
	for !h.mu.TryLock() {
		if time.Since(start) > 2*time.Second {
			t.Fatal("the search went on 2 s after its page went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.mu.Unlock()
	t.Logf("the abandoned search stopped %s after the cancel", time.Since(start).Round(time.Millisecond))
}
