package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// buildProxy writes a module proxy (the GOPROXY protocol over file://, as
// `go help goproxy` describes it) to out: every module of mods at version,
// made from the files a release of it would hold (see files). A consumer
// then resolves authkit exactly as from a published release:
//
//	GOPROXY=file://$out,https://proxy.golang.org GONOSUMDB=github.com/authkit-go/authkit
func buildProxy(root, out, version string, mods []Module) error {
	stamp, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	for _, m := range mods {
		mv := module.Version{Path: m.Path, Version: version}
		if err := module.Check(mv.Path, mv.Version); err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		list, err := files(root, m, mods)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		zf := make([]modzip.File, len(list))
		for i, f := range list {
			zf[i] = &file{path: strings.TrimPrefix(f, m.Dir+"/"), abs: filepath.Join(root, filepath.FromSlash(f))}
		}
		if err := writeZip(filepath.Join(dir, version+".zip"), mv, zf); err != nil {
			return fmt.Errorf("proxy: %s: %w", m.Dir, err)
		}
		gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod"))
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		for name, data := range map[string][]byte{
			version + ".mod":  gomod,
			version + ".info": stamp,
			"list":            []byte(version + "\n"),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return fmt.Errorf("proxy: %w", err)
			}
		}
	}
	return nil
}

func writeZip(name string, mv module.Version, files []modzip.File) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := modzip.Create(f, mv, files); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// file is one file of a module zip (modzip.File).
type file struct {
	path string // in the module
	abs  string // on disk
}

func (f *file) Path() string                 { return f.path }
func (f *file) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f *file) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
