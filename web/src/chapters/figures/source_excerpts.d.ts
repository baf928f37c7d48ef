// The module web/source_excerpts.mjs serves at build time: functions cut from the source files
// listed in check.excerpts.json.
declare module 'virtual:source-excerpts' {
  interface SourceExcerpt {
    id: string;
    lang: 'cpp' | 'js';
    /** Relative to the repository's root. */
    file: string;
    signature: string;
    /** 1-based lines of the file, first and last included. */
    first: number;
    last: number;
    text: string;
  }
  const excerpts: SourceExcerpt[];
  export default excerpts;
}
