// Package prefault maps the memory pages of a large new slice in one
// system call, before the program writes to it, instead of one page fault
// per page as it does. On the virtual machines splitplan first ran on, a
// first touch of a page cost 10–25 µs, so a large slice filled once (a
// trace's requests, the SLO check's buffer) cost more to fault in than to
// fill. (The simulator's result slice no longer uses it: on the current
// host, dropping it changed no measured time.)
package prefault
