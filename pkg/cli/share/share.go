package share

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// ShareOptions are the inputs of `ledgerctl share`.
type ShareOptions struct {
	f            *cmdutil.Factory
	As           string
	Orgs         []string
	JSON         bool
	For          string
	Organization string
	Limit        int
}

func NewCmdShare(f *cmdutil.Factory) *cobra.Command {
	opts := &ShareOptions{f: f}
	cmd := &cobra.Command{
		Use:   "share",
		Short: "Share an archive for a limited time, list its shares, revoke one",
		Long: `Runs the same functions as POST, GET and DELETE /api/archives/{id}/shares, as
the person given with --as. Only the archive's owner and the admins of its
organization may share it and see its shares (can_share); to anyone else an
archive looks absent.

A share lets one user, or every member of one organization, view the archive
until it expires: at most ` + archive.FormatDays(archive.MaxShareDuration) + `, written like 72h, 90m, 1h30m or 7d. The share
is recorded in the ledger (who, whom, when, until when) and its OpenFGA tuple
is queued in the same transaction; it takes effect once the outbox is
drained (` + "`ledgerctl drain`" + ` or serve). A new share to the same grantee replaces
the previous one. Revoking removes the tuple the same way; expired and
revoked shares stay listed as past shares. See docs/shares.md.`,
		Example: "  ledgerctl share grant 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 carol --for 72h --as alice --org acme\n" +
			"  ledgerctl share grant 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --organization partner --for 7d --as alice --org acme\n" +
			"  ledgerctl share list 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme\n" +
			"  ledgerctl share revoke 5d1c7e2a-8b3f-4a6e-9c0d-1e2f3a4b5c6d --as alice --org acme",
	}
	cmd.PersistentFlags().StringVar(&opts.As, "as", "", "subject to act as (required)")
	cmd.PersistentFlags().StringSliceVar(&opts.Orgs, "org", nil, "organization the subject is a member of (repeatable)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print as JSON (the API's body)")
	grant := &cobra.Command{
		Use:   "grant ARCHIVE_ID [USER] --for DURATION",
		Short: "Let a user, or an organization's members, view an archive for a while",
		Example: "  ledgerctl share grant 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 carol --for 72h --as alice --org acme\n" +
			"  ledgerctl share grant 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --organization partner --for 7d --as erin --org acme --json",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return shareGrantRun(cmd, opts, args) },
	}
	grant.Flags().StringVar(&opts.For, "for", "", "how long the share lasts (72h, 90m, 7d; at most "+archive.FormatDays(archive.MaxShareDuration)+")")
	grant.Flags().StringVar(&opts.Organization, "organization", "", "share with every member of this organization instead of one USER")
	list := &cobra.Command{
		Use:   "list [ARCHIVE_ID]",
		Short: "List an archive's shares (or those of every archive you may share), active and past",
		Example: "  ledgerctl share list 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme\n" +
			"  ledgerctl share list --as erin --org acme --json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return shareListRun(cmd, opts, args) },
	}
	list.Flags().IntVar(&opts.Limit, "limit", 200, "without ARCHIVE_ID: at most this many shares, newest first")
	revoke := &cobra.Command{
		Use:     "revoke SHARE_ID",
		Short:   "End a share before it expires",
		Example: "  ledgerctl share revoke 5d1c7e2a-8b3f-4a6e-9c0d-1e2f3a4b5c6d --as alice --org acme",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return shareRevokeRun(cmd, opts, args[0]) },
	}
	cmd.AddCommand(grant, list, revoke)
	return cmd
}

// shareFlag names, for a usage error, the flag or argument an input error
// is about.
func shareFlag(err error) error {
	var fe *ledger.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	name := map[string]string{"user": "USER", "organization": "--organization", "duration": "--for"}[fe.Field]
	return cmdutil.Usagef("%s %s", name, fe.Reason)
}

func shareGrantRun(cmd *cobra.Command, opts *ShareOptions, args []string) error {
	who, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the person sharing (the archive's owner, or an admin of its organization)")
	if err != nil {
		return err
	}
	id, err := cmdutil.UUIDArg("ARCHIVE_ID", args[0])
	if err != nil {
		return err
	}
	var req archive.ShareRequest
	switch {
	case len(args) == 2 && cmd.Flags().Changed("organization"):
		return cmdutil.Usagef("give USER or --organization, not both")
	case len(args) == 2:
		req.User = &args[1]
	case cmd.Flags().Changed("organization"):
		req.Organization = &opts.Organization
	default:
		return cmdutil.Usagef("give USER (whom to share with) or --organization ORG (whose members)")
	}
	req.Duration = opts.For
	if _, _, err := (&archive.Shares{}).Validate(req); err != nil {
		return shareFlag(err)
	}
	a, err := opts.f.App(cmdutil.ShareSettings...)
	if err != nil {
		return err
	}
	shares, err := a.Shares(cmd.Context())
	if err != nil {
		return err
	}
	g, err := shares.Grant(cmd.Context(), who.Subject, id, req)
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("archive %s: not found (absent, or %s may not share it)", id, who.Subject)}
	}
	if err != nil {
		return shareFlag(err)
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(g)
	}
	printShares(opts.f, append([]archive.Share{g.Share}, g.Replaced...))
	whom := "user " + cmdutil.Deref(g.User)
	if g.Organization != nil {
		whom = "the members of " + *g.Organization
	}
	fmt.Fprintf(opts.f.Streams.Err, "%s may view archive %s until %s (%s), once the outbox is drained (`ledgerctl drain` or serve)\n",
		cmdutil.Printable(whom), id, ui.Time(g.ExpiresAt), g.Duration)
	for _, r := range g.Replaced {
		fmt.Fprintf(opts.f.Streams.Err, "it replaces share %s (%s, until %s)\n", r.ID, r.Status, ui.Time(r.ExpiresAt))
	}
	return nil
}

func shareListRun(cmd *cobra.Command, opts *ShareOptions, args []string) error {
	who, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the person whose view of the shares to show")
	if err != nil {
		return err
	}
	id := ""
	if len(args) == 1 {
		if id, err = cmdutil.UUIDArg("ARCHIVE_ID", args[0]); err != nil {
			return err
		}
	} else if opts.Limit < 1 || opts.Limit > 10000 {
		return cmdutil.Usagef("--limit: must be between 1 and 10000, got %d", opts.Limit)
	}
	a, err := opts.f.App(cmdutil.ShareSettings...)
	if err != nil {
		return err
	}
	shares, err := a.Shares(cmd.Context())
	if err != nil {
		return err
	}
	var l archive.ShareList
	if id != "" {
		l, err = shares.List(cmd.Context(), who.Subject, id)
	} else {
		l, err = shares.ListAll(cmd.Context(), who.Subject, opts.Limit)
	}
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("archive %s: not found (absent, or %s may not see its shares)", id, who.Subject)}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(l)
	}
	p := ui.New(opts.f.Streams.Out)
	for _, part := range []struct {
		title  string
		shares []archive.Share
	}{{"active", l.Active}, {"past", l.Past}} {
		p.Printf("%s shares: %d\n", part.title, len(part.shares))
		if len(part.shares) > 0 {
			printShares(opts.f, part.shares)
		}
	}
	if l.Truncated {
		fmt.Fprintln(opts.f.Streams.Err, "older shares were not examined (--limit, or the list's bound of 5,000 shares)")
	}
	return nil
}

func shareRevokeRun(cmd *cobra.Command, opts *ShareOptions, raw string) error {
	who, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the person revoking (the archive's owner, or an admin of its organization)")
	if err != nil {
		return err
	}
	id, err := cmdutil.UUIDArg("SHARE_ID", raw)
	if err != nil {
		return err
	}
	a, err := opts.f.App(cmdutil.ShareSettings...)
	if err != nil {
		return err
	}
	shares, err := a.Shares(cmd.Context())
	if err != nil {
		return err
	}
	sh, changed, err := shares.Revoke(cmd.Context(), who.Subject, "", id)
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("share %s: not found (absent, or %s may not share its archive)", id, who.Subject)}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(sh)
	}
	printShares(opts.f, []archive.Share{sh})
	switch {
	case !changed:
		fmt.Fprintf(opts.f.Streams.Err, "share %s had already ended (%s); nothing changed\n", id, sh.Status)
	case sh.Status == archive.ShareExpired:
		fmt.Fprintf(opts.f.Streams.Err, "share %s had expired; its tuple leaves OpenFGA once the outbox is drained\n", id)
	default:
		fmt.Fprintf(opts.f.Streams.Err, "share %s is revoked; it stops working once the outbox is drained (`ledgerctl drain` or serve)\n", id)
	}
	return nil
}

// printShares prints shares as a table on stdout.
func printShares(f *cmdutil.Factory, shares []archive.Share) {
	rows := make([][]string, len(shares))
	for i, s := range shares {
		whom := "user " + cmdutil.Deref(s.User)
		if s.Organization != nil {
			whom = "org " + *s.Organization
		}
		ended := ""
		if s.RevokedAt != nil {
			ended = ui.Time(*s.RevokedAt) + " by " + cmdutil.Deref(s.RevokedBy)
		}
		rows[i] = []string{s.ID, s.ArchiveID, whom, s.GrantedBy, ui.Time(s.GrantedAt), s.Duration, ui.Time(s.ExpiresAt), s.Status, ended}
		for j := range rows[i] {
			rows[i][j] = cmdutil.Printable(rows[i][j])
		}
	}
	ui.New(f.Streams.Out).Table([]string{"share", "archive", "with", "granted by", "granted", "for", "until", "status", "ended"}, rows)
}
