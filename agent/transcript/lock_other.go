//go:build !unix

package transcript

import "os"

// lock does nothing where flock is missing: there two servers could write
// one transcript.
func lock(*os.File) error { return nil }
