package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// command is one authkit subcommand.
type command struct {
	name    string
	summary string // one line in the command list
	help    string // the text of `authkit help <name>`, after the usage line
	usage   string // the arguments, for the usage line; empty when none

	// run does the work; c is the command itself and args are the
	// arguments after its name. It returns the exit code: 0 done, 1
	// failed, 2 bad usage.
	run func(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) int
}

// commands lists every subcommand, in the order the usage shows them. A new
// command is one more entry, with its code in a file of its own.
var commands = []*command{
	encryptionKeyCmd,
	sessionSecretCmd,
	migrateCmd,
	userCmd,
	openAPICmd,
	limitsCmd,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args (without the program name) and returns the
// exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	name, args := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return runHelp(args, stdout, stderr)
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "authkit: unknown command %q\n\n", name)
		printUsage(stderr)
		return 2
	}
	return cmd.run(context.Background(), cmd, args, stdout, stderr)
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func printUsage(w io.Writer) {
	width := len("help")
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	var b strings.Builder
	b.WriteString("authkit is the command-line tool of the authkit library.\n\n")
	b.WriteString("Usage:\n\n\tauthkit <command> [arguments]\n\nCommands:\n\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "\t%-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(&b, "\t%-*s  %s\n", width, "help", "print help about a command")
	b.WriteString("\nRun \"authkit help <command>\" for more about a command.\n")
	io.WriteString(w, b.String())
}

// runHelp is `authkit help [command]`.
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		printUsage(stdout)
		return 0
	case 1:
		if args[0] == "help" {
			printUsage(stdout)
			return 0
		}
		cmd := lookup(args[0])
		if cmd == nil {
			fmt.Fprintf(stderr, "authkit help: unknown command %q\n\n", args[0])
			printUsage(stderr)
			return 2
		}
		cmd.printHelp(stdout)
		return 0
	default:
		fmt.Fprintln(stderr, "authkit help: too many arguments")
		fmt.Fprintln(stderr, "usage: authkit help [command]")
		return 2
	}
}

func (c *command) printHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: authkit %s\n\n%s", strings.TrimSpace(c.name+" "+c.usage), c.help)
}

// parseFlags parses a command's flags from args, into fs, and allows no
// other arguments. On -h or --help it prints the command's help on stdout;
// on a bad argument it prints the error and the usage line on stderr. It
// returns ok false and the exit code when the command should stop there.
func (c *command) parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (exit int, ok bool) {
	fs.SetOutput(io.Discard) // errors are printed below, in authkit's words
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(stdout)
		return 0, false
	case err != nil:
		fmt.Fprintf(stderr, "authkit %s: %v\n", c.name, err)
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "authkit %s: unexpected argument %q\n", c.name, fs.Arg(0))
	default:
		return 0, true
	}
	fmt.Fprintf(stderr, "usage: authkit %s\nRun \"authkit help %s\" for more.\n", strings.TrimSpace(c.name+" "+c.usage), c.name)
	return 2, false
}
