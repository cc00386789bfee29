import ts from 'typescript';

/**
 * The names a type declaration file exports as values (classes, functions, constants): what a
 * consumer can import at run time, as opposed to interfaces and type aliases. Read with the
 * TypeScript checker rather than by pattern, so `export *`, re-exports and `export { type X }`
 * are all understood. Imports between declaration files resolve like Node's (NodeNext).
 */
export function valueExportsOfDeclarations(files: readonly string[]): Map<string, string[]> {
  const program = ts.createProgram(files, {
    noEmit: true,
    noLib: true,
    types: [],
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const result = new Map<string, string[]>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`TypeScript could not read ${file}`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    const names = moduleSymbol
      ? checker
          .getExportsOfModule(moduleSymbol)
          .filter((symbol) => {
            const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
            return (target.flags & ts.SymbolFlags.Value) !== 0;
          })
          .map((symbol) => symbol.getName())
      : [];
    result.set(file, names.sort());
  }
  return result;
}
