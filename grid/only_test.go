package grid

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSelectRuns(t *testing.T) {
	var runs []Run
	for i, id := range []string{"cp-pll-a", "cp2-pll-b", "complex2-pll-c", "complex2-mle-d", "cp+-pll-e", "complex-pll-f", "cp2-mle-g", "x", "y", "z", "w"} {
		runs = append(runs, Run{Index: i, ID: id})
	}
	tests := []struct {
		only string
		want []int
		err  string
	}{
		{"", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ""},
		{"3", []int{3}, ""},
		{"0-2,9", []int{0, 1, 2, 9}, ""},
		{" 5 , 1-2, 2 ", []int{1, 2, 5}, ""},
		{"10", []int{10}, ""},
		{"4-4", []int{4}, ""},
		{"re:complex2-.*", []int{2, 3}, ""},
		{"re:^cp", []int{0, 1, 4, 6}, ""},
		{`re:^cp\+-`, []int{4}, ""},
		{"re:-mle-", []int{3, 6}, ""},
		{"11", nil, "runs 0-10"},
		{"5-3", nil, "ends before it starts"},
		{"-1", nil, "want a run index"},
		{"a", nil, "want a run index"},
		{"1,,2", nil, "empty element"},
		{"1-", nil, "want a run index"},
		{"re:(", nil, "missing closing )"},
		{"re:nothing", nil, "matches no run"},
	}
	for _, tt := range tests {
		t.Run(tt.only, func(t *testing.T) {
			got, err := Select(tt.only, runs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var idx []int
			for _, r := range got {
				idx = append(idx, r.Index)
			}
			if !reflect.DeepEqual(idx, tt.want) {
				t.Errorf("got %v, want %v", idx, tt.want)
			}
		})
	}
}

func TestFormatIndexList(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
		{[]int{4, 9}, "4,9"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			got := FormatIndexList(tt.in)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			back, err := parseIndexList(got, 100)
			if err != nil || !reflect.DeepEqual(back, tt.in) {
				t.Errorf("parse(%q) = %v, %v; want %v", got, back, err, tt.in)
			}
		})
	}
}
