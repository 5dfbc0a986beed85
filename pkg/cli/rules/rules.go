package rules

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// RulesCheckOptions are the inputs of `ledgerctl rules check`.
type RulesCheckOptions struct {
	f     *cmdutil.Factory
	Seeds []string
	Rules []string
	URLs  []string
	JSON  bool
}

func NewCmdRules(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "rules", Short: "Check crawl scope rules before starting a crawl",
		Example: "  ledgerctl rules check --seed https://www.example.com/ --rule skip:ads.example.com --rule follow:same-site"}
	opts := &RulesCheckOptions{f: f}
	check := &cobra.Command{
		Use:   "check",
		Short: "Show how rules read, which rule shadows which, and whether the seeds are followed",
		Long: `Runs the checks POST /api/crawls runs, without starting anything (the same
function as GET /api/crawl-rules/check). Rules are ACTION:PATTERN, tried top to
bottom, first match wins; a link no rule matches is dropped. ACTION is follow
(capture and read its links), capture (capture only) or skip. PATTERN is a
scope word (same-origin, same-host, same-site, any), a lowercase hostname
(that host and its subdomains), or an http(s) URL prefix.

--url decides any link with the rules: which rule, which action.
Exit status 1 when the rules or seeds would be refused.`,
		Example: "  ledgerctl rules check --seed https://www.example.com/ --rule skip:ads.example.com --rule follow:same-site\n" +
			"  ledgerctl rules check --seed https://www.example.com/ --rule follow:same-origin --url https://www.example.com/search?q=1\n" +
			"  ledgerctl rules check --seed https://www.example.com/ --json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return rulesCheckRun(opts) },
	}
	check.Flags().StringArrayVar(&opts.Seeds, "seed", nil, "a seed URL (repeatable)")
	check.Flags().StringArrayVar(&opts.Rules, "rule", nil, "a rule ACTION:PATTERN, in order (repeatable; default follow:same-origin)")
	check.Flags().StringArrayVar(&opts.URLs, "url", nil, "a URL to decide with the rules (repeatable)")
	check.Flags().BoolVar(&opts.JSON, "json", false, "print the answer as JSON (the endpoint's body)")
	cmd.AddCommand(check)
	return cmd
}

func rulesCheckRun(opts *RulesCheckOptions) error {
	if len(opts.Seeds) == 0 {
		return cmdutil.Usagef("at least one --seed is required")
	}
	ans, err := rules.Try(rules.CheckRequest{Seeds: opts.Seeds, Rules: opts.Rules, URLs: opts.URLs})
	if err != nil {
		return cmdutil.AsFlags(err, map[string]string{rules.FieldRule: "--rule", rules.FieldSeed: "--seed", rules.FieldURL: "--url"})
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(ans); err != nil {
			return err
		}
	} else {
		p := ui.New(opts.f.Streams.Out)
		var rows [][]string
		for _, r := range ans.Rules {
			note := ""
			switch {
			case r.Error != "":
				note = "invalid: " + r.Error
			case r.CoveredBy > 0:
				note = fmt.Sprintf("can never match: rule %d covers it", r.CoveredBy)
			}
			rows = append(rows, []string{p.Mark(r.Error == "" && r.CoveredBy == 0), strconv.Itoa(r.Rule), string(r.Action), string(r.Kind), r.Pattern, note})
		}
		p.Table([]string{"", "rule", "action", "kind", "pattern", ""}, rows)
		p.Println()
		rows = nil
		for _, s := range ans.Seeds {
			note := ""
			switch {
			case !s.Valid:
				note = "not an http(s) URL: " + s.Error
			case !s.Followed:
				note = "the rules do not follow it (its first matching rule is not follow, or none matches)"
			}
			rows = append(rows, []string{p.Mark(s.Valid && s.Followed), s.URL, s.Site, note})
		}
		p.Table([]string{"", "seed", "site", ""}, rows)
		if len(ans.URLs) > 0 {
			p.Println()
			rows = nil
			for _, u := range ans.URLs {
				switch {
				case u.Error != "":
					rows = append(rows, []string{u.URL, "", "", "not an http(s) URL: " + u.Error})
				case u.Rule == 0:
					rows = append(rows, []string{u.URL, "0", "skip", "no rule matches: dropped"})
				default:
					rows = append(rows, []string{u.URL, strconv.Itoa(u.Rule), string(u.Action), u.Pattern})
				}
			}
			p.Table([]string{"url", "rule", "action", "pattern"}, rows)
		}
	}
	if !ans.OK {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: ans.Err()}
	}
	return nil
}
