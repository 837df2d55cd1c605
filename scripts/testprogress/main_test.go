package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantCode int
		want     []string // lines of the output, in order
		dontWant []string
	}{
		{"passing packages", `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestX"}
{"Action":"output","Package":"p/a","Test":"TestX","Output":"=== RUN   TestX\n"}
{"Action":"output","Package":"p/a","Test":"TestX","Output":"noise of a passing test\n"}
{"Action":"pass","Package":"p/a","Test":"TestX","Elapsed":0.5}
{"Action":"output","Package":"p/a","Output":"PASS\n"}
{"Action":"pass","Package":"p/a","Elapsed":1.25}
{"Action":"start","Package":"p/b"}
{"Action":"skip","Package":"p/b"}
`, 0, []string{"running p/a", "ok  \tp/a\t1.2s", "running p/b", "?   \tp/b\t[no test files]", "all tests passed"},
			[]string{"noise of a passing test"}},
		{"a failing test", `{"Action":"start","Package":"p/a"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"fine\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"    a_test.go:5: boom\n"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p/a","Test":"TestBad"}
{"Action":"output","Package":"p/a","Output":"FAIL\n"}
{"Action":"fail","Package":"p/a","Elapsed":2}
`, 1, []string{"running p/a", "    a_test.go:5: boom", "--- FAIL: TestBad (0.00s)", "FAIL\tp/a\t2.0s", "FAIL ("},
			[]string{"fine"}},
		{"a build failure", `{"ImportPath":"p/a [p/a.test]","Action":"build-output","Output":"# p/a\n"}
{"ImportPath":"p/a [p/a.test]","Action":"build-output","Output":"a_test.go:1: undefined: x\n"}
{"ImportPath":"p/a [p/a.test]","Action":"build-fail"}
{"Action":"start","Package":"p/a"}
{"Action":"output","Package":"p/a","Output":"FAIL\tp/a [build failed]\n"}
{"Action":"fail","Package":"p/a","Elapsed":0,"FailedBuild":"p/a [p/a.test]"}
`, 1, []string{"# p/a", "a_test.go:1: undefined: x", "FAIL\tp/a [build failed]", "FAIL ("}, nil},
		{"a test that timed out", `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestHang"}
{"Action":"output","Package":"p/a","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"p/a","Test":"TestHang","Output":"panic: test timed out after 3s\n"}
{"Action":"output","Package":"p/a","Test":"TestHang","Output":"\trunning tests:\n\t\tTestHang (3s)\n"}
{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t3.005s\n"}
{"Action":"fail","Package":"p/a","Elapsed":3.005}
`, 1, []string{"running p/a", "panic: test timed out after 3s", "TestHang (3s)", "FAIL\tp/a\t3.005s", "FAIL ("}, nil},
		{"not JSON", "go: unknown flag -x\n", 1, []string{"go: unknown flag -x", "FAIL ("}, nil},
		{"a package without a result", `{"Action":"start","Package":"p/a"}
`, 1, []string{"running p/a", "FAIL\tp/a\t(no result)", "FAIL ("}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(strings.NewReader(tt.in), &out, time.Hour); code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			got := out.String()
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("missing %q (in order) in:\n%s", w, got)
				}
				at += i + len(w)
			}
			for _, w := range tt.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("%q in:\n%s", w, got)
				}
			}
		})
	}
}
