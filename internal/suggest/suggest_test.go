package suggest

import "testing"

func TestClosest(t *testing.T) {
	fields := []string{"namespace_name", "pod_name", "labels", "level"}
	keys := []string{"db", "exclude_path", "flush_timeout", "parser", "path", "poll_interval", "read_from_head", "refresh_interval", "tag"}
	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"namspace_name", fields, "namespace_name"}, // a letter left out
		{"pod_nme", fields, "pod_name"},
		{"lables", fields, "labels"}, // neighbours swapped: one edit
		{"levle", fields, "level"},
		{"LEVEL", fields, "level"},                     // case does not count
		{"namespace", fields, "namespace_name"},        // a prefix
		{"namespace_name_x", fields, "namespace_name"}, // begins with a candidate
		{"pod", fields, "pod_name"},
		{"zzz", fields, ""},
		{"po", fields, ""}, // too short for a prefix
		{"", fields, ""},
		{"x", nil, ""},
		{"read_from_heads", keys, "read_from_head"},
		{"Read-From-Head", keys, "read_from_head"}, // separators do not count
		{"readfromhead", keys, "read_from_head"},
		{"tga", keys, "tag"},
		{"pth", keys, "path"},
		{"interval", keys, ""}, // poll_ or refresh_: not a slip of either
		{"lowercase", []string{"len", "lower", "upper"}, "lower"},
		{"cont", []string{"count", "cnt"}, "cnt"}, // both one edit away: sorted order decides
		{"cont", []string{"cnt", "count"}, "cnt"}, // whatever order they come in
		{"ab", []string{"b", "a"}, "a"},
		{"abc", []string{"abcdef", "abcd"}, "abcd"},     // the nearer prefix
		{"to_in", []string{"join", "to_int"}, "to_int"}, // both one edit away without separators; to_int as written
		{"replace_r", []string{"replace", "replace_re"}, "replace_re"},
		{"max_fi", []string{"match", "max_files", "max_size", "path"}, "max_files"},
	}
	for _, tc := range tests {
		if got := Closest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"level", "level", 0},
		{"level", "levle", 1}, // a swap of neighbours is one edit
		{"ab", "ba", 1},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
		{"kitten", "sitting", 3},
		{"pod_name", "pod_nme", 1},
		{"status", "stauts", 1},
		{"flaw", "lawn", 2},
		{"日本", "日本語", 3}, // bytes, not runes
	}
	for _, tc := range tests {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
