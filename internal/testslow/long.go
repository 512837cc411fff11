//go:build long

package testslow

// Long is true under the build tag long (go test -tags long ./...): the
// heavy matrices run in full.
const Long = true
