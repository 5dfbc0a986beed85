package api_test

// BenchmarkReplayReads: a replay session's range reads through its
// session origin (GET /wacz/{id}.wacz?t=…: token and label check, can_view through the check
// cache, a ranged GetObject streamed back) next to the same reads made
// straight from S3 with a presigned URL, in the same run, at concurrency 8.
// Results go to docs/benchmarks.md.
//
//	eval "$(bin/ledgerctl dev stack up --shell)"
//	go test ./pkg/api -run '^$' -bench ReplayReads -benchtime 10x -v

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sessionRanges is what ReplayWeb.page reads from a WACZ of size bytes to
// show pages: the first bytes (what the file is), the ZIP's central
// directory (a suffix read), then records at scattered offsets, mostly
// small, some large (1 KiB to 512 KiB, roughly log-uniform).
func sessionRanges(size int64, n int, rng *rand.Rand) []string {
	out := []string{"bytes=0-65535", "bytes=-65536"}
	for len(out) < n {
		length := int64(1024 << rng.IntN(9)) // 1 KiB .. 256 KiB
		length += rng.Int64N(length)
		first := rng.Int64N(size - length)
		out = append(out, fmt.Sprintf("bytes=%d-%d", first, first+length-1))
	}
	return out
}

// readAll makes every read of ranges against url at concurrency c and
// returns the bytes received and the wall time.
func readAll(ctx context.Context, client *http.Client, url string, ranges []string, c int) (int64, time.Duration, error) {
	var next atomic.Int64
	var total atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ranges) {
					return
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				req.Header.Set("Range", ranges[i])
				res, err := client.Do(req)
				if err == nil {
					var n int64
					n, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					total.Add(n)
					if err == nil && res.StatusCode != http.StatusPartialContent {
						err = fmt.Errorf("%s: status %d", ranges[i], res.StatusCode)
					}
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return total.Load(), time.Since(start), firstErr
}

func BenchmarkReplayReads(b *testing.B) {
	if testing.Short() {
		b.Skip("needs the dev stack")
	}
	const (
		size        = 64 << 20 // a large WACZ: most reads are far apart
		reads       = 400
		concurrency = 8
	)
	f := newReplayFixture(b, replayOptions{objectSize: size})
	id := f.ids[0]
	_, tok := f.link(b, id, "alice", "acme", "")
	// The session's origin, as a browser reaches it: a name under
	// replay.localhost, on loopback.
	apiURL := f.reads(b, tok)(id, tok)
	bucket, key, err := f.svc.Catalog.ArchiveLocation(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, port, err := net.SplitHostPort(addr); err == nil && strings.HasSuffix(host, ".localhost") {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			return dialer.DialContext(ctx, network, addr)
		}}}
	ranges := sessionRanges(size, reads, rand.New(rand.NewPCG(1, 2)))
	ctx := context.Background()

	var apiBytes, s3Bytes int64
	var apiTime, s3Time time.Duration
	for i := 0; b.Loop(); i++ {
		direct, err := f.env.App.Blob().PresignGet(ctx, bucket, key, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		// Alternate which side goes first, so neither always meets the
		// other's warm caches.
		sides := []func() error{
			func() error {
				n, d, err := readAll(ctx, client, apiURL, ranges, concurrency)
				apiBytes += n
				apiTime += d
				return err
			},
			func() error {
				n, d, err := readAll(ctx, client, direct, ranges, concurrency)
				s3Bytes += n
				s3Time += d
				return err
			},
		}
		if i%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			if err := side(); err != nil {
				b.Fatal(err)
			}
		}
	}
	n := float64(b.N * reads)
	b.ReportMetric(n/apiTime.Seconds(), "api-req/s")
	b.ReportMetric(float64(apiBytes)/apiTime.Seconds()/(1<<20), "api-MB/s")
	b.ReportMetric(n/s3Time.Seconds(), "s3-req/s")
	b.ReportMetric(float64(s3Bytes)/s3Time.Seconds()/(1<<20), "s3-MB/s")
	b.ReportMetric(apiTime.Seconds()/s3Time.Seconds(), "api/s3-time")
	b.ReportMetric(0, "ns/op")
	if apiBytes != s3Bytes {
		b.Errorf("the API sent %d bytes, S3 %d", apiBytes, s3Bytes)
	}
}
