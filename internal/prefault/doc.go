// Package prefault maps the memory pages of a large new slice in one
// system call, before the program writes to it, instead of one page fault
// per page as it does. On the virtual machines splitplan runs on, a first
// touch of a page costs 10–25 µs, so a simulation's result slice (1.1 MB
// for 8,800 requests) cost more to fault in than to fill.
package prefault
