// Package cmem reports how much memory the C allocator has handed out, so
// benchmarks can count what the syntax trees hold outside the Go heap.
package cmem

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static long long cmem_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
	return (long long)(mi.uordblks + mi.hblkhd);
#else
	return -1;
#endif
}
*/
import "C"

// InUse is the number of bytes allocated with malloc and not yet freed,
// over all arenas; -1 where the C library cannot say (only glibc 2.33 and
// later can).
func InUse() int64 { return int64(C.cmem_in_use()) }
