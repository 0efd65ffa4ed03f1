package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/host/resource/scaffold"
)

// newCmd is `adminkernel new`, the generators; `new module` writes a
// business module (host/resource/scaffold).
func newCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "new",
		Short: "Generate code for an application built on the kernel",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newModuleCmd())
	return cmd
}

func newModuleCmd() *cobra.Command {
	var (
		fields, labelsZH  []string
		dir, table        string
		menuID            int64
		force, print, org bool
	)
	cmd := &cobra.Command{
		Use:   "module <name> --field name:type[:flags] ...",
		Short: "Generate a business module: its ent schema, its resource description and its HTTP tests",
		Long: "new module writes DIR/<name>/ (default ./<name>) holding schema.go (the ent schema of table\n" +
			"<name> pluralised, with the kernel's id, audit and soft-delete mixins), module.go (the resource\n" +
			"description and Module(), to add to host.Options.Modules) and module_test.go (HTTP tests through\n" +
			"kerneltest that pass as generated). DIR must be inside a Go module that requires the kernel.\n\n" +
			"A field is name:type[:flags]. Types: string, text, int, decimal, bool, date, datetime,\n" +
			"dict=<code> (a value of the module's dictionary <code>, seeded with two placeholder items), org\n" +
			"(an organisation: data scope applies to it). Flags: required, unique, list, nolist, filter,\n" +
			"filter=eq|contains|range, nofilter (list and filter are on by default except for text; decimal\n" +
			"has no filter unless asked). --org adds the field org_id:org. Labels are the field names\n" +
			"title-cased: edit them in module.go.",
		Example: "  adminkernel new module warehouse --field sku:string:required,unique --field qty:int \\\n" +
			"    --field price:decimal --field site:org --field arrived:date --field active:bool \\\n" +
			"    --field kind:dict=warehouse_kind --field note:text",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if org {
				fields = append(fields, scaffold.OrgField)
			}
			spec, err := scaffold.New(args[0], fields)
			if err != nil {
				return err
			}
			spec.MenuID, spec.Table = menuID, table
			for _, pair := range labelsZH {
				col, label, ok := strings.Cut(pair, "=")
				found := false
				for i := range spec.Fields {
					if ok && spec.Fields[i].Column == col {
						spec.Fields[i].LabelZH, found = label, true
					}
				}
				if !found {
					return fmt.Errorf("--label-zh %q: want field=label naming a --field", pair)
				}
			}
			if err := spec.Check(); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if print {
				if spec.ImportPath == "" {
					if spec.ImportPath, err = scaffold.ImportPath(filepath.Join(dir, spec.Name)); err != nil {
						spec.ImportPath = "example.com/app/" + spec.Name
					}
				}
				files, err := spec.Render()
				if err != nil {
					return err
				}
				for _, f := range files {
					if _, err := fmt.Fprintf(out, "// ==== %s/%s ====\n%s\n", spec.Name, f.Name, f.Data); err != nil {
						return err
					}
				}
				return nil
			}
			paths, err := spec.Write(dir, force)
			if err != nil {
				return err
			}
			for _, p := range paths {
				if _, err := fmt.Fprintln(out, "wrote", p); err != nil {
					return err
				}
			}
			_, err = fmt.Fprintf(out, "next: add %s.Module() to host.Options.Modules, then go test ./%s/\n", spec.Name, spec.Name)
			return err
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&fields, "field", nil, "a field, name:type[:flags] (repeat)")
	f.StringVar(&dir, "dir", ".", "directory the module's folder is created in")
	f.Int64Var(&menuID, "menu-id", 2000, "id of the resource's menu page (buttons take the next ids, dictionaries start here); 1000 or more")
	f.StringVar(&table, "table", "", "table name (default: the name pluralised)")
	f.StringArrayVar(&labelsZH, "label-zh", nil, "a Chinese label, field=label (repeat; default: the English label)")
	f.BoolVar(&org, "org", false, "add an organisation field "+scaffold.OrgField+" that data scope applies to")
	f.BoolVar(&force, "force", false, "overwrite the files of an existing module folder")
	f.BoolVar(&print, "print", false, "write the files to standard output instead of the disk")
	return cmd
}
