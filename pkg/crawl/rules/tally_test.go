package rules

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestTally(t *testing.T) {
	t.Run("zero value is empty", func(t *testing.T) {
		var tl Tally
		if rows := tl.Rows(); len(rows) != 0 {
			t.Errorf("Rows = %+v", rows)
		}
	})
	t.Run("distinct URLs per rule, action and hostname", func(t *testing.T) {
		var tl Tally
		add := func(rule int, action Action, raw string) { tl.Add(Decision{action, rule}, mustURL(t, raw)) }
		add(2, Follow, "https://www.example.com/b")
		add(1, Skip, "https://ads.example.com/1")
		add(1, Skip, "https://ads.example.com:8443/2") // port stripped: same hostname
		add(1, Skip, "https://ads.example.com/1#again")
		add(1, Skip, "https://img.ads.example.com/1")
		add(0, Skip, "https://other.test/")
		add(2, Follow, "https://www.example.com/a")
		add(2, Follow, "http://www.example.com/b") // other URL, same hostname
		want := []DecisionRow{
			{Rule: 0, Action: Skip, Hostname: "other.test", Links: 1, Samples: []string{"https://other.test/"}},
			{Rule: 1, Action: Skip, Hostname: "ads.example.com", Links: 2, Samples: []string{"https://ads.example.com/1", "https://ads.example.com:8443/2"}},
			{Rule: 1, Action: Skip, Hostname: "img.ads.example.com", Links: 1, Samples: []string{"https://img.ads.example.com/1"}},
			{Rule: 2, Action: Follow, Hostname: "www.example.com", Links: 3, Samples: []string{"https://www.example.com/b", "https://www.example.com/a", "http://www.example.com/b"}},
		}
		if got := tl.Rows(); !reflect.DeepEqual(got, want) {
			t.Errorf("Rows =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("at most five samples, first seen", func(t *testing.T) {
		var tl Tally
		for i := range 12 {
			tl.Add(Decision{Skip, 1}, mustURL(t, fmt.Sprintf("https://ads.example.com/%d", i)))
			tl.Add(Decision{Skip, 1}, mustURL(t, fmt.Sprintf("https://ads.example.com/%d", i)))
		}
		rows := tl.Rows()
		want := []string{"https://ads.example.com/0", "https://ads.example.com/1", "https://ads.example.com/2", "https://ads.example.com/3", "https://ads.example.com/4"}
		if len(rows) != 1 || rows[0].Links != 12 || !reflect.DeepEqual(rows[0].Samples, want) {
			t.Errorf("Rows = %+v", rows)
		}
	})
	t.Run("deterministic order and JSON", func(t *testing.T) {
		build := func(order []string) []byte {
			var tl Tally
			for _, h := range order {
				tl.Add(Decision{Skip, 0}, mustURL(t, "https://"+h+"/"))
			}
			b, _ := json.Marshal(tl.Rows())
			return b
		}
		a := build([]string{"c.test", "a.test", "b.test"})
		b := build([]string{"b.test", "c.test", "a.test"})
		if string(a) != string(b) {
			t.Errorf("order depends on input: %s vs %s", a, b)
		}
		want := `[{"rule":0,"action":"skip","hostname":"a.test","links":1,"samples":["https://a.test/"]},` +
			`{"rule":0,"action":"skip","hostname":"b.test","links":1,"samples":["https://b.test/"]},` +
			`{"rule":0,"action":"skip","hostname":"c.test","links":1,"samples":["https://c.test/"]}]`
		if string(a) != want {
			t.Errorf("JSON = %s, want %s", a, want)
		}
	})
	t.Run("AddAll from FilterLinks", func(t *testing.T) {
		s := mustSet(t, specs(t, "skip:ads.example.com", "follow:same-origin"), "https://www.example.com/")
		ds, _ := s.FilterLinks(mustURL(t, "https://www.example.com/"), []Link{
			{Href: "https://ads.example.com/a"}, {Href: "https://ads.example.com/a#x"}, {Href: "https://www.example.com/p"},
		})
		var tl Tally
		tl.AddAll(ds)
		want := []DecisionRow{
			{Rule: 1, Action: Skip, Hostname: "ads.example.com", Links: 1, Samples: []string{"https://ads.example.com/a"}},
			{Rule: 2, Action: Follow, Hostname: "www.example.com", Links: 1, Samples: []string{"https://www.example.com/p"}},
		}
		if got := tl.Rows(); !reflect.DeepEqual(got, want) {
			t.Errorf("Rows = %+v", got)
		}
	})
}
