package main

import (
	"go/ast"
	"go/types"
	"golang.org/x/tools/go/ssa"
	"fmt"
	"os"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa/ssautil"
)

func main() {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: os.Args[1]}
	pkgs, err := packages.Load(cfg, os.Args[2])
	fmt.Println(err, len(pkgs), pkgs[0].Errors)
	prog, spkgs := ssautil.Packages(pkgs, 0)
	prog.Build()
	for _, m := range spkgs[0].Members {
		_ = m
	}
	var fns []*ssa.Function
	for _, f := range pkgs[0].Syntax {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				fns = append(fns, prog.FuncValue(pkgs[0].TypesInfo.Defs[fd.Name].(*types.Func)))
			}
		}
	}
	for _, fn := range fns {
		if fn.Name() == os.Args[3] {
			fn.WriteTo(os.Stdout)
			for _, a := range fn.AnonFuncs {
				a.WriteTo(os.Stdout)
			}
		}
	}
}
