package wal

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestRawFsyncOnlyOnLinux checks that the raw fsync of tailsync.go is
// built for Linux alone. Elsewhere os.File.Sync is not a plain fsync(2):
// on macOS it is fcntl F_FULLFSYNC, which also flushes the drive's write
// cache, so a raw fsync would acknowledge records less durable than
// tidwall's Sync makes them; Windows has neither syscall.RawSyscall nor
// SYS_FSYNC, so the package would not build. It reads the files go/build
// selects for each system, without compiling them.
func TestRawFsyncOnlyOnLinux(t *testing.T) {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, goos := range []string{"linux", "darwin", "windows", "freebsd"} {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH = goos, "amd64"
		pkg, err := ctx.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", goos, err)
		}
		var calls []string
		fset := token.NewFileSet()
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "syscall" && sel.Sel.Name == "RawSyscall" {
						calls = append(calls, fset.Position(sel.Pos()).String())
					}
				}
				return true
			})
		}
		if want := goos == "linux"; (len(calls) > 0) != want {
			t.Errorf("GOOS=%s: raw fsync calls %v; want them only on linux", goos, calls)
		}
	}
}
