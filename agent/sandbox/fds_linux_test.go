package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestInheritedFilesStayWithTheServer: a file the server inherited open
// without close-on-exec (an editor's, a shell's) reaches no command it
// starts once HideEnvironment ran. The server is this test binary run
// again, so that the test process itself stays dumpable.
func TestInheritedFilesStayWithTheServer(t *testing.T) {
	if os.Getenv("SANDBOX_FDS_CHILD") == "1" {
		f, err := os.CreateTemp("", "inherited-by-the-server-*")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f.Name())
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
			t.Fatal(err)
		}
		if os.Getenv("SANDBOX_FDS_HIDE") == "1" {
			if err := HideEnvironment(); err != nil {
				t.Fatal(err)
			}
		}
		out, err := exec.Command("ls", "-l", "/proc/self/fd").CombinedOutput()
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.Write(out)
		return
	}
	for _, hide := range []string{"0", "1"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInheritedFilesStayWithTheServer$", "-test.v")
		cmd.Env = append(os.Environ(), "SANDBOX_FDS_CHILD=1", "SANDBOX_FDS_HIDE="+hide)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the server: %v\n%s", err, out)
		}
		leaked := strings.Contains(string(out), "inherited-by-the-server-")
		if hide == "1" && leaked {
			t.Errorf("a file the server inherited reached its command:\n%s", out)
		}
		if hide == "0" && !leaked {
			t.Errorf("without HideEnvironment the inherited file did not reach the command, so this test shows nothing:\n%s", out)
		}
	}
}
