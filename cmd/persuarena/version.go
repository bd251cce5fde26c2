package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/internal/buildinfo"
)

// newVersionCmd returns version (persuarena --version prints its first
// line).
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from and the Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev, modified := buildinfo.Commit()
			switch {
			case rev == "":
				rev = "unknown"
			case modified:
				rev += " (with uncommitted changes)"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "persuarena %s\ncommit %s\n%s %s/%s\n", buildinfo.Version(), rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
