package archive

import (
	"context"
	"errors"
	"io"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// Object is an open object of the bucket, read at offsets (each read a
// ranged GET).
type Object interface {
	io.ReaderAt
	Size() int64
}

// RangeObjects opens objects for ranged reading. A missing object is an error
// that matches blob.ErrNotFound; an unreachable store one that matches
// ledger.ErrUnreachable.
type RangeObjects interface {
	OpenObject(ctx context.Context, bucket, key string) (Object, error)
}

// ErrNoThumbnail is the answer for an archive the caller may view whose
// WACZ holds no readable picture (none, a hostile or broken one, or the
// object is gone).
var ErrNoThumbnail = errors.New("no thumbnail")

// Thumbnail returns the picture of an archive the caller may view: its
// WACZ's urn:thumbnail: record, else its urn:view: screenshot, read with
// ranged reads (wacz.ReadThumbnail) and checked to be a whole PNG or JPEG.
// An archive the caller may not view and an absent one take the same path
// and are the same ledger.ErrNotFound, as for URL. Only a caller who may
// view the archive can learn that it has no picture (ErrNoThumbnail).
func (a *Access) Thumbnail(ctx context.Context, subject string, orgs []string, id string) (wacz.Image, error) {
	bucket, key, lerr := a.Catalog.ArchiveLocation(ctx, id)
	if err := viewable(ctx, a.Perms, &a.standIn, a.logger(), subject, orgs, id, lerr); err != nil {
		return wacz.Image{}, err
	}
	if a.Ranges == nil {
		return wacz.Image{}, ErrNoThumbnail
	}
	obj, err := a.Ranges.OpenObject(ctx, bucket, key)
	if err != nil {
		if errors.Is(err, ledger.ErrUnreachable) {
			return wacz.Image{}, err
		}
		a.logger().Warn("thumbnail: the archive's object cannot be opened", "archiveId", id, "error", err.Error())
		return wacz.Image{}, ErrNoThumbnail
	}
	img, err := wacz.ReadThumbnail(obj, obj.Size())
	switch {
	case err == nil:
		return img, nil
	case errors.Is(err, wacz.ErrNoThumbnail):
		return wacz.Image{}, ErrNoThumbnail
	case errors.Is(err, wacz.ErrBadThumbnail), errors.Is(err, wacz.ErrNotZip):
		a.logger().Warn("thumbnail refused", "archiveId", id, "error", err.Error())
		return wacz.Image{}, ErrNoThumbnail
	}
	return wacz.Image{}, err
}
