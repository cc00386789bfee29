// Made at build time by tsup.config.ts from src/page (see src/build/page.ts).
declare module 'virtual:inspector-page' {
  /** The whole page: HTML with its CSS and module script inlined. */
  const html: string;
  export default html;
}
