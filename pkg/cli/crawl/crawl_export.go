package crawl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// exportResult is what `crawl export --json` prints.
type exportResult struct {
	CrawlID    string `json:"crawlId"`
	File       string `json:"file"`
	Archives   int    `json:"archives"`
	Pages      int    `json:"pages"`
	IndexLines int    `json:"indexLines"`
	Bytes      int64  `json:"bytes"`
	SHA256     string `json:"sha256"`
}

// newCmdCrawlExport is `ledgerctl crawl export`; newCmdCrawl adds it to
// the crawl command.
func newCmdCrawlExport(opts *CrawlOptions) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export CRAWL_ID --out FILE.wacz",
		Short: "Write the crawl's archives you may view as one WACZ file",
		Long: `Writes one WACZ 1.1.1 file holding the archives of the crawl that --as may
view (chosen as its replay collection chooses them, up to the crawl's first
10,000 captures, oldest first): every archive's WARC as it is, one index of
all their records and one page list of all their pages, so that the crawl
opens as one file in ReplayWeb.page or any WACZ reader, with no server. An
archive the person may not view is left out; a crawl that does not exist and
one of which they may view nothing are the same "not found" (exit 1).

The file is written next to FILE and renamed to FILE once whole; an existing
FILE is left alone (exit 2). An archive whose WACZ cannot be merged (a
compressed ZipNum index, a WARC failing its checksum, a broken page list)
stops the export, naming the archive, and leaves no FILE (exit 1). Progress goes to stderr; --json prints a summary.`,
		Example: "  ledgerctl crawl export 3f0c… --out crawl.wacz --as alice --org acme",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			id, err := cmdutil.UUIDArg("CRAWL_ID", args[0])
			if err != nil {
				return err
			}
			switch {
			case out == "":
				return cmdutil.Usagef("--out is required: the WACZ file to write")
			case !utf8.ValidString(out) || strings.ContainsFunc(out, unicode.IsControl):
				return cmdutil.Usagef("--out %q is not a file name this command writes: it holds NUL, a control character or bytes that are not UTF-8", out)
			}
			if _, err := os.Lstat(out); err == nil {
				return cmdutil.Usagef("--out %s exists: name another file, or remove it", out)
			}
			a, err := opts.f.App(cmdutil.StoreSettings...)
			if err != nil {
				return err
			}
			access, err := a.Access(cmd.Context())
			if err != nil {
				return err
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name()) // gone once renamed
			errOut, lang := opts.f.Streams.Err, opts.f.Lang()
			sum, err := access.ExportCrawl(cmd.Context(), c.Subject, c.Orgs, id, tmp, func(done, total int) {
				fmt.Fprintln(errOut, words.Say(lang, "readingArchive", done+1, total))
			})
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if opts.JSON {
				lang = i18n.English // the error below, for scripts
			}
			switch {
			case errors.Is(err, ledger.ErrNotFound):
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New(words.Say(lang, "noArchiveToExport", id, c.Subject))}
			case errors.Is(err, ledger.ErrUnreachable):
				return err // S3 stopped answering mid-way: exit 4
			case errors.Is(err, wacz.ErrMergeInput):
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
			case err != nil:
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			res := exportResult{CrawlID: id, File: out, Archives: sum.Parts, Pages: sum.Pages, IndexLines: sum.IndexLines, Bytes: sum.Bytes, SHA256: sum.SHA256}
			if opts.JSON {
				return opts.print(res)
			}
			fmt.Fprintln(opts.f.Streams.Out, words.Say(lang, "wroteExport", cmdutil.Printable(out), res.Archives, res.Pages, res.Bytes, res.SHA256))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the WACZ file to write (required; must not exist)")
	return cmd
}
