import { describe, expect, it } from 'vitest';
import { formatCellDbUrl, formatCellMqUrl } from '../../src/config/cell-url-template.js';

const FULL = '{scheme}://{username}:{password}@{hostname}:{port}/{path}?{query}';
const INDEXED = '{username1}:{password1}@{hostname1}:{port1},{username2}:{password2}@{hostname2}:{port2}';

// Expected values: Nova 26.2.2's CellMapping._format_url / format_db_url run under CPython 3.11.
const CASES: readonly { readonly name: string; readonly local: string | undefined; readonly template: string; readonly result: string }[] = [
  {
    name: 'hostname is lower-cased; the password stays percent-encoded',
    local: 'mysql+pymysql://nova:s%40cret@DB.Example.COM:3306/nova?charset=utf8',
    template: FULL,
    result: 'mysql+pymysql://nova:s%40cret@db.example.com:3306/nova?charset=utf8',
  },
  {
    name: 'a typical cell template keeps its own database name',
    local: 'mysql+pymysql://nova:pw@db/nova',
    template: '{scheme}://{username}:{password}@{hostname}/nova_cell1',
    result: 'mysql+pymysql://nova:pw@db/nova_cell1',
  },
  {
    name: 'a missing port or password is the literal None',
    local: 'mysql+pymysql://nova@db/nova',
    template: FULL,
    result: 'mysql+pymysql://nova:None@db:None/nova?',
  },
  {
    name: 'every missing part is None for sqlite',
    local: 'sqlite:////var/lib/nova/nova.sqlite',
    template: FULL,
    result: 'sqlite://None:None@None:None/var/lib/nova/nova.sqlite?',
  },
  { name: 'an empty local URL still renders', local: '', template: FULL, result: '://None:None@None:None/?' },
  { name: 'an unknown variable gives the raw template', local: 'mysql://u:p@h/db', template: 'mysql://{nope}@h/db', result: 'mysql://{nope}@h/db' },
  { name: 'positional fields give the raw template', local: 'mysql://u:p@h/db', template: '{0}/{}', result: '{0}/{}' },
  { name: 'a single "}" gives the raw template', local: 'mysql://u:p@h/db', template: 'a}b', result: 'a}b' },
  { name: 'an unclosed "{" gives the raw template', local: 'mysql://u:p@h/db', template: 'x{', result: 'x{' },
  { name: '"}}" and "{{" are escapes', local: 'mysql://u:p@h/db', template: 'a}}b {{x}} {hostname}', result: 'a}b {x} h' },
  { name: 'a template without braces is unchanged', local: 'mysql://u:p@h/db', template: 'mysql://x@h/db', result: 'mysql://x@h/db' },
  { name: '!r is repr()', local: 'mysql://u:p@H/db', template: '{hostname!r}', result: "'h'" },
  { name: '!r of None', local: 'sqlite://', template: '{hostname!r}', result: 'None' },
  { name: 'query and fragment', local: 'mysql://u:p@h:0/db?charset=utf8#frag', template: '{fragment}|{query}|{port}', result: 'frag|charset=utf8|0' },
  {
    name: 'a bad port in the local URL makes every template raw, even without {port}',
    local: 'mysql://h:abc/db',
    template: '{scheme}://x@{hostname}/cell1',
    result: '{scheme}://x@{hostname}/cell1',
  },
  {
    name: '"}}" is not unescaped when the template falls back',
    local: 'mysql://h:abc/db',
    template: 'a}}b',
    result: 'a}}b',
  },
  {
    name: 'multi-host: urlparse takes the last host; userinfo ends at the last "@"',
    local: 'rabbit://a:b@H1:5672,c:d@h2/vh',
    template: FULL,
    result: 'rabbit://a:b@H1:5672,c:d@h2:None/vh?',
  },
  {
    name: 'multi-host: indexed variables keep case and render strings',
    local: 'rabbit://a:b@H1:5672,c:d@h2/vh',
    template: INDEXED,
    result: 'a:b@H1:5672,c:d@h2:None',
  },
  {
    name: "multi-host IPv6: Zed's {portN} keeps the leading ':'; a missing username is ''",
    local: 'rabbit://a:b@[FE80::1]:5672,c@[::2]/',
    template: INDEXED,
    result: 'a:b@FE80::1::5672,c:None@::2:',
  },
  {
    name: 'indexed variables do not exist for a single host',
    local: 'rabbit://a:b@h1:5672/',
    template: '{hostname1}',
    result: '{hostname1}',
  },
  { name: 'an unbalanced IPv6 bracket gives the raw template', local: 'rabbit://u:p@[::1', template: '{hostname}', result: '{hostname}' },
  { name: 'the local option unset: raw template', local: undefined, template: FULL, result: FULL },
];

describe('formatCellDbUrl', () => {
  it.each(CASES)('$name', ({ local, template, result }) => {
    expect(formatCellDbUrl(template, local)).toBe(result);
  });

  it('keeps a NULL column NULL', () => {
    expect(formatCellDbUrl(null, 'mysql://u:p@h/db')).toBeNull();
    expect(formatCellDbUrl(null, undefined)).toBeNull();
  });
});

describe('formatCellMqUrl', () => {
  it('renders transport_url templates against the local transport_url', () => {
    expect(formatCellMqUrl('{scheme}://{username}:{password}@{hostname}:{port}/cell1', 'rabbit://openstack:s%40cret@RABBIT:5672/')).toBe(
      'rabbit://openstack:s%40cret@rabbit:5672/cell1',
    );
  });

  it("leaves cell0's none:/// alone", () => {
    expect(formatCellMqUrl('none:///', 'rabbit://u:p@h:5672/')).toBe('none:///');
  });

  it('returns the raw template when [DEFAULT] transport_url is unset', () => {
    expect(formatCellMqUrl('rabbit://{username}@h/', undefined)).toBe('rabbit://{username}@h/');
  });
});
