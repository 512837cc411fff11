//go:build !long

package testslow

// Long is false without the build tag long: the heavy matrices run one
// fast representative each (go test -tags long ./... runs them in full).
const Long = false
