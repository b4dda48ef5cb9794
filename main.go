// Command ssobridge signs a partner portal's users in to the video
// platform's editor (README.md). The command line is package commands;
// the wiring is package app.
package main

import (
	"context"
	_ "embed"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // server.time_zone's names where the host has no zoneinfo (a minimal container)

	"github.com/ssobridge/ssobridge/cli"
	"github.com/ssobridge/ssobridge/commands"
)

// defaultConfig is config.yaml, used when no file is given and none is in
// the working directory (a binary run elsewhere, the container).
//
//go:embed config.yaml
var defaultConfig []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), DefaultConfig: defaultConfig}
	os.Exit(commands.Run(ctx, os.Args[1:], env))
}
