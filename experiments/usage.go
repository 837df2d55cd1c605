package main

import "embed"

// The help texts of the command and its verbs, one file each: VERB -h
// prints usage/VERB.txt, then the verb's flags.
//
//go:embed usage/*.txt
var usageFiles embed.FS

// usage is the help text usage/name.txt.
func usage(name string) string {
	b, err := usageFiles.ReadFile("usage/" + name + ".txt")
	if err != nil {
		panic(err) // compiled in: only a misspelt name fails
	}
	return string(b)
}
