import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import ts from 'typescript';

/** A package as the documentation check sees it: its folder and the declaration files it publishes. */
export interface DeclaredPackage {
  readonly name: string;
  /** Absolute path of the package's folder: only declarations in files under it are its own. */
  readonly dir: string;
  /** Absolute paths of the declaration files its `exports` map points at. */
  readonly entries: readonly string[];
}

/**
 * What a package exports without a documentation comment, read from its built declarations with
 * the TypeScript checker: each exported symbol, and each public member of an exported interface,
 * class or object type (including object types nested in a member's type), e.g. `Clock.now`.
 * A symbol is checked in the package that declares it, so a re-export of @ids/engine's `Clock`
 * from @ids/sonyflake is engine's to document, and a class's members inherited from an exported
 * base are the base's (from a base the package keeps private, they are the class's). A member
 * overriding a documented one inherits its comment, as editors show it; one overriding a member
 * of a type from outside the packages (Error's `name`) is that type's.
 * All packages share one program, so a declaration file read by several is parsed once.
 */
export function undocumentedExports(packages: readonly DeclaredPackage[]): Map<string, string[]> {
  const program = ts.createProgram(
    packages.flatMap((pkg) => pkg.entries),
    {
      noEmit: true,
      // Lib is read only to know Error's members: a class that overrides `name` overrides lib's.
      lib: ['lib.es2023.d.ts'],
      types: [],
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
    },
  );
  const checker = program.getTypeChecker();
  const result = new Map<string, string[]>();
  const dirs = packages.map((pkg) => realpathSync(pkg.dir) + sep);
  const under = (dir: string, node: ts.Node) => realpathSync(node.getSourceFile().fileName).startsWith(dir);
  /**
   * Whether a class's member overrides one declared outside the packages (Error's `name`, a
   * dependency's method): the meaning is the base type's, and so is the documentation.
   */
  const overridesForeign = (owner: ts.ClassDeclaration, name: string) => {
    const classSymbol = owner.name && checker.getSymbolAtLocation(owner.name);
    if (!classSymbol) return false;
    const pending = [
      ...checker.getBaseTypes(checker.getDeclaredTypeOfSymbol(classSymbol) as ts.InterfaceType),
    ];
    for (let base = pending.pop(); base; base = pending.pop()) {
      const inherited = checker.getPropertyOfType(base, name)?.declarations ?? [];
      if (inherited.some((node) => !dirs.some((dir) => under(dir, node)))) return true;
      if (base.isClassOrInterface()) pending.push(...checker.getBaseTypes(base));
    }
    return false;
  };
  for (const pkg of packages) {
    const own = realpathSync(pkg.dir) + sep;
    const isOwn = (node: ts.Node) => under(own, node);
    const missing = new Set<string>();
    const documented = (symbol: ts.Symbol | undefined) =>
      symbol !== undefined && ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== '';

    // What the package exports, by declaring symbol: each is checked once, under its exported name.
    const exports = new Map<ts.Symbol, string>();
    for (const entry of pkg.entries) {
      const source = program.getSourceFile(entry);
      if (!source) throw new Error(`TypeScript could not read ${entry}`);
      const moduleSymbol = checker.getSymbolAtLocation(source);
      if (!moduleSymbol) throw new Error(`${entry} is not a module`);
      for (const exported of checker.getExportsOfModule(moduleSymbol)) {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        if (!exports.has(symbol)) exports.set(symbol, exported.getName());
      }
    }

    /** Members of an object type written in a declaration: `{ a: 1 }` or an interface body. */
    const checkMembers = (owner: string, members: ts.NodeArray<ts.TypeElement | ts.ClassElement>) => {
      for (const member of members) {
        if (!member.name || ts.isPrivateIdentifier(member.name) || ts.isConstructorDeclaration(member))
          continue;
        const flags = ts.getCombinedModifierFlags(member as ts.Declaration);
        if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        if (ts.isClassDeclaration(member.parent) && overridesForeign(member.parent, member.name.getText()))
          continue;
        const path = `${owner}.${member.name.getText()}`;
        if (!documented(checker.getSymbolAtLocation(member.name))) missing.add(path);
        if ('type' in member && member.type) checkTypeNode(path, member.type as ts.TypeNode);
      }
    };
    /** Object types inside a type: `{ ... }`, also within unions, intersections, arrays and parentheses. */
    const checkTypeNode = (owner: string, node: ts.TypeNode): void => {
      if (ts.isTypeLiteralNode(node)) checkMembers(owner, node.members);
      else if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node))
        for (const part of node.types) checkTypeNode(owner, part);
      else if (ts.isParenthesizedTypeNode(node) || ts.isArrayTypeNode(node) || ts.isTypeOperatorNode(node))
        checkTypeNode(owner, ts.isArrayTypeNode(node) ? node.elementType : node.type);
    };
    /**
     * An interface's or class's members, and those it inherits from a base of this package that
     * is not exported itself (users meet those members only through `owner`).
     */
    const checkBody = (owner: string, declaration: ts.InterfaceDeclaration | ts.ClassDeclaration) => {
      checkMembers(owner, declaration.members);
      for (const clause of declaration.heritageClauses ?? []) {
        for (const base of clause.types) {
          let symbol = checker.getSymbolAtLocation(base.expression);
          if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
          if (!symbol || exports.has(symbol)) continue;
          for (const inherited of symbol.declarations ?? [])
            if (
              isOwn(inherited) &&
              (ts.isInterfaceDeclaration(inherited) || ts.isClassDeclaration(inherited))
            )
              checkBody(owner, inherited);
        }
      }
    };

    for (const [symbol, name] of exports) {
      const declarations = (symbol.declarations ?? []).filter(isOwn);
      // Declared elsewhere (another package, or a dependency): checked where it is declared.
      if (declarations.length === 0) continue;
      if (!documented(symbol)) missing.add(name);
      for (const declaration of declarations) {
        if (ts.isInterfaceDeclaration(declaration) || ts.isClassDeclaration(declaration))
          checkBody(name, declaration);
        else if (ts.isTypeAliasDeclaration(declaration)) checkTypeNode(name, declaration.type);
        else if (ts.isVariableDeclaration(declaration) && declaration.type)
          checkTypeNode(name, declaration.type);
        else if (ts.isEnumDeclaration(declaration))
          for (const member of declaration.members)
            if (!documented(checker.getSymbolAtLocation(member.name)))
              missing.add(`${name}.${member.name.getText()}`);
      }
    }
    result.set(pkg.name, [...missing].sort());
  }
  return result;
}
