// Python's str.format(**kwargs), as far as Nova's cell URL templates need it.
// The field grammar (escapes, nesting, conversions) follows CPython's
// Objects/stringlib/unicode_format.h so that a template fails exactly where
// Python raises: CellMapping._format_url catches every exception and falls
// back to the raw template, so "where does it fail" is observable behaviour.
//
// Supported: literal text, `{{` and `}}`, `{name}`, `{name!s}`, `{name!r}`,
// `{name!a}`. Not supported (reported as UnsupportedFormatError, which callers
// treat like a Python failure): attribute or index access (`{a.b}`, `{a[0]}`)
// and non-empty format specs (`{port:d}`). No Nova template uses them.

/** A value a template variable can hold: Python str, int or None. */
export type PythonValue = string | number | null;

/** What Python raises (KeyError, IndexError, ValueError): the template cannot be rendered. */
export class FormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatError';
  }
}

/** A field that Python would accept but this subset does not render. */
export class UnsupportedFormatError extends FormatError {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedFormatError';
  }
}

/** Renders `template` like Python's `template.format(**vars)`; throws FormatError where Python raises. */
export function formatPython(template: string, vars: ReadonlyMap<string, PythonValue>): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const c = template[i];
    if (c === '}') {
      if (template[i + 1] !== '}') throw new FormatError("Single '}' encountered in format string");
      out += '}';
      i += 2;
      continue;
    }
    if (c !== '{') {
      out += c;
      i += 1;
      continue;
    }
    if (i + 1 >= template.length) throw new FormatError("Single '{' encountered in format string");
    if (template[i + 1] === '{') {
      out += '{';
      i += 2;
      continue;
    }
    const field = readField(template, i + 1);
    out += renderField(field, vars);
    i = field.end;
  }
  return out;
}

interface Field {
  readonly name: string;
  readonly conversion: string | undefined;
  readonly spec: string;
  /** Index just past the closing '}'. */
  readonly end: number;
}

function readField(text: string, start: number): Field {
  let i = start;
  let c = '';
  // The field name ends at '}', ':' or '!'; '[' skips to the next ']'.
  while (i < text.length) {
    c = text[i++] ?? '';
    if (c === '{') throw new FormatError("unexpected '{' in field name");
    if (c === '[') {
      while (i < text.length && text[i] !== ']') i++;
      continue;
    }
    if (c === '}' || c === ':' || c === '!') break;
  }
  const name = text.slice(start, i - 1);
  if (c !== '}' && c !== ':' && c !== '!') throw new FormatError("expected '}' before end of string");
  if (c === '}') return { name, conversion: undefined, spec: '', end: i };

  let conversion: string | undefined;
  if (c === '!') {
    if (i >= text.length) throw new FormatError('end of string while looking for conversion specifier');
    conversion = text[i++];
    if (i < text.length) {
      const next = text[i++];
      if (next === '}') return { name, conversion, spec: '', end: i };
      if (next !== ':') throw new FormatError("expected ':' after conversion specifier");
    }
  }
  const specStart = i;
  let depth = 1;
  while (i < text.length) {
    const s = text[i++];
    if (s === '{') depth++;
    else if (s === '}' && --depth === 0) return { name, conversion, spec: text.slice(specStart, i - 1), end: i };
  }
  throw new FormatError("unmatched '{' in format spec");
}

function renderField(field: Field, vars: ReadonlyMap<string, PythonValue>): string {
  const head = /^[^.[]*/.exec(field.name)?.[0] ?? '';
  // An empty or numeric name is positional; format(**kwargs) has no positional
  // arguments, so Python raises IndexError.
  if (head === '' || /^\d+$/.test(head)) throw new FormatError(`Replacement index ${head || 0} out of range for positional args tuple`);
  if (!vars.has(head)) throw new FormatError(`KeyError: '${head}'`);
  if (head !== field.name) throw new UnsupportedFormatError(`attribute or index access in {${field.name}} is not supported`);
  const value = vars.get(head) ?? null;
  let text: string;
  switch (field.conversion) {
    case undefined:
    case 's':
      text = pythonStr(value);
      break;
    case 'r':
      text = pythonRepr(value, false);
      break;
    case 'a':
      text = pythonRepr(value, true);
      break;
    default:
      throw new FormatError(`Unknown conversion specifier ${field.conversion}`);
  }
  if (field.spec !== '') {
    // format(None, 'x') is a TypeError in Python; other specs are simply not rendered here.
    throw new UnsupportedFormatError(`format spec ":${field.spec}" is not supported`);
  }
  return text;
}

function pythonStr(value: PythonValue): string {
  if (value === null) return 'None';
  return typeof value === 'number' ? String(value) : value;
}

function pythonRepr(value: PythonValue, asciiOnly: boolean): string {
  if (value === null) return 'None';
  if (typeof value === 'number') return String(value);
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0');
    else if (asciiOnly && code > 0x7f) {
      if (code <= 0xff) out += '\\x' + code.toString(16).padStart(2, '0');
      else if (code <= 0xffff) out += '\\u' + code.toString(16).padStart(4, '0');
      else out += '\\U' + code.toString(16).padStart(8, '0');
    } else out += ch;
  }
  return out + quote;
}
