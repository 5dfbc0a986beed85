package crawl

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// TargetsOptions are the inputs shared by the `ledgerctl targets` commands.
type TargetsOptions struct {
	f    *cmdutil.Factory
	Org  string
	JSON bool
}

func (o *TargetsOptions) service(ctx context.Context) (*crawl.Targets, error) {
	if strings.TrimSpace(o.Org) == "" {
		return nil, cmdutil.Usagef("--org is required: capture targets belong to one organization")
	}
	if err := ledger.CheckOrganization(o.Org); err != nil {
		return nil, cmdutil.Usagef("--org: %v", err)
	}
	a, err := o.f.App("DATABASE_URL")
	if err != nil {
		return nil, err
	}
	return a.Targets(ctx)
}

func NewCmdTargets(f *cmdutil.Factory) *cobra.Command {
	opts := &TargetsOptions{f: f}
	cmd := &cobra.Command{
		Use:     "targets",
		Example: "  ledgerctl targets add https://www.example.com/ --org acme\n  ledgerctl targets list --org acme",
		Short:   "Manage an organization's capture targets (the seeds of fromTargets crawls)",
		Long: `Capture targets are the URLs a scheduled crawl starts from (POST /api/crawls
{"fromTargets":{}}). These commands write the database directly and ask no
one's permission: they are for operators.`,
	}
	cmd.PersistentFlags().StringVar(&opts.Org, "org", "", "the organization (required)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print JSON")
	var labels []string
	add := &cobra.Command{
		Use:   "add URL... | -",
		Short: "Add URLs (all or nothing: one unreadable URL adds none)",
		Long: `Adds URLs to the organization's targets, normalised like crawl seeds. A URL
already there is enabled again and gains the labels it lacks. "-" reads one URL
per line from standard input (blank lines and # comments skipped). A label is
at most 200 bytes of UTF-8, without control characters or surrounding spaces.`,
		Example: "  ledgerctl targets add https://www.example.com/ https://news.example.org/ --org acme --label daily\n  ledgerctl targets add - --org acme < urls.txt",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			urls := args
			if len(args) == 1 && args[0] == "-" {
				urls = nil
				sc := bufio.NewScanner(f.Streams.In)
				sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
				for sc.Scan() {
					if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
						urls = append(urls, line)
					}
				}
				if err := sc.Err(); err != nil {
					return err
				}
				if len(urls) == 0 {
					return cmdutil.Usagef("no URL on standard input")
				}
			}
			for i, l := range labels {
				if err := crawl.CheckLabel(l); err != nil {
					return cmdutil.Usagef("--label #%d: %v", i+1, err)
				}
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			added, err := svc.AddTargets(cmd.Context(), opts.Org, urls, labels)
			if err != nil {
				return Error(err, opts.JSON, "organization "+opts.Org+" was not found")
			}
			if opts.JSON {
				return json.NewEncoder(f.Streams.Out).Encode(added)
			}
			var n, re int
			for _, a := range added {
				switch {
				case a.Added:
					n++
				case a.Reenabled:
					re++
				}
			}
			fmt.Fprintf(f.Streams.Out, "%d added, %d enabled again, %d already there\n", n, re, len(added)-n-re)
			return nil
		},
	}
	add.Flags().StringArrayVar(&labels, "label", nil, "a label for every URL added (repeatable)")
	list := &cobra.Command{
		Use:     "list",
		Example: "  ledgerctl targets list --org acme\n  ledgerctl targets list --org acme --json",
		Short:   "List the organization's targets",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			ts, err := svc.ListTargets(cmd.Context(), opts.Org)
			if err != nil {
				return Error(err, opts.JSON, "organization "+opts.Org+" was not found")
			}
			if opts.JSON {
				return json.NewEncoder(f.Streams.Out).Encode(ts)
			}
			rows := make([][]string, len(ts))
			for i, t := range ts {
				state := "enabled"
				if !t.Enabled {
					state = "disabled"
				}
				rows[i] = []string{strconv.FormatInt(t.ID, 10), state, t.URL, strings.Join(t.Labels, ","), ui.Time(t.UpdatedAt)}
			}
			ui.New(f.Streams.Out).Table([]string{"id", "state", "url", "labels", "updated"}, rows)
			return nil
		},
	}
	setEnabled := func(use, short string, enabled bool) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			Example: "  ledgerctl targets " + use + " 12 --org acme",
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := targetID(args[0])
				if err != nil {
					return err
				}
				svc, err := opts.service(cmd.Context())
				if err != nil {
					return err
				}
				t, err := svc.SetTargetEnabled(cmd.Context(), opts.Org, id, enabled)
				if err != nil {
					return Error(err, opts.JSON, fmt.Sprintf("no capture target %d in organization %s", id, opts.Org))
				}
				if opts.JSON {
					return json.NewEncoder(f.Streams.Out).Encode(t)
				}
				fmt.Fprintf(f.Streams.Out, "target %d (%s) is %sd\n", t.ID, t.URL, use)
				return nil
			},
		}
	}
	rm := &cobra.Command{
		Use: "rm ID", Short: "Remove a target", Args: cobra.ExactArgs(1),
		Example: "  ledgerctl targets rm 12 --org acme",
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := targetID(args[0])
			if err != nil {
				return err
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			if err := svc.RemoveTarget(cmd.Context(), opts.Org, id); err != nil {
				return Error(err, opts.JSON, fmt.Sprintf("no capture target %d in organization %s", id, opts.Org))
			}
			if opts.JSON {
				return json.NewEncoder(f.Streams.Out).Encode(map[string]any{"removed": id})
			}
			fmt.Fprintf(f.Streams.Out, "target %d removed\n", id)
			return nil
		},
	}
	cmd.AddCommand(add, list, setEnabled("enable", "Enable a target", true), setEnabled("disable", "Disable a target (kept, not crawled)", false), rm)
	return cmd
}

func targetID(raw string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return 0, cmdutil.Usagef("ID must be a target's number (see `ledgerctl targets list`), got %q", raw)
	}
	return id, nil
}
