// The parser ships no types; this is the shape it returns (one entry per metric family).
declare module 'parse-prometheus-text-format' {
  interface Sample {
    readonly value: string;
    readonly labels?: Readonly<Record<string, string>>;
  }
  interface Family {
    readonly name: string;
    readonly help: string;
    readonly type: 'GAUGE' | 'COUNTER' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED';
    readonly metrics: readonly Sample[];
  }
  function parsePrometheusTextFormat(text: string): Family[];
  export default parsePrometheusTextFormat;
}
