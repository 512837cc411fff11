package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// tempDir makes a new directory, readable by its owner only, in the
// system's temporary directory: prefix and ten random digits. The length
// is fixed where os.MkdirTemp's varies, because the model reads these
// paths (a spill file's, a command's TMPDIR) and a name one digit longer
// would make one run of the same session differ from the next.
func tempDir(prefix string) (string, error) {
	for range 10000 {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%010d", prefix, rand.Uint32()))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no new directory %s* in %s", prefix, os.TempDir())
}
