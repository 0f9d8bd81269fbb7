// Package report is the last stage of splitplan's pipeline: what a run
// tells its reader. It prints the tables of every command, writes the CSV
// files (each with its reader next to it, so a file written by one command
// can be read back by another) and assembles figure data from results for
// package plots to draw.
//
// Errors caused by the content of a file the user gave are InputError
// values, so the command line can answer them with exit status 2.
package report
