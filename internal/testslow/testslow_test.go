package testslow

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  string
	}{
		{"", 1, ""},
		{"1", 1, ""},
		{"3", 3, ""},
		{"2.5", 2.5, ""},
		{"0.5", 0, "at least 1"},
		{"0", 0, "at least 1"},
		{"-2", 0, "at least 1"},
		{"yes", 0, `REIKA_TEST_SLOW="yes"`},
		{"NaN", 0, "at least 1"},
		{"Inf", 0, "at least 1"},
	} {
		got, err := parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parse(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
