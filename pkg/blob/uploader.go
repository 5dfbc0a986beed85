package blob

import "context"

// Uploader puts objects into one bucket under an optional key prefix and
// answers where each went as "s3://<bucket>/<key>", the way a capture
// manifest reports its artifacts. It is what the built-in capturer writes
// through (pkg/capture.Uploader).
type Uploader struct {
	Client *Client
	Bucket string
	// Prefix is prepended to every name ("" or ending in "/").
	Prefix string
}

// Put writes body at Prefix+name.
func (u Uploader) Put(ctx context.Context, name, contentType string, body []byte) (string, error) {
	key := u.Prefix + name
	if err := u.Client.Put(ctx, u.Bucket, key, contentType, body); err != nil {
		return "", err
	}
	return "s3://" + u.Bucket + "/" + key, nil
}
