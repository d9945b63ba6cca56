import { describe, expect, it } from 'vitest';
import { maskNovaUrl, redactUrl } from '../../src/config/mask-url.js';

// Expected values: Nova's mask_passwd_in_url run under CPython 3.11.
const NOVA_MASK: readonly (readonly [input: string, output: string])[] = [
  ['rabbit://a:b@h1:5672,c:d@h2:5672/v', 'rabbit://a:****@h2:5672/v'],
  ['none:///', 'none:/'],
  ['mysql+pymysql://nova:pw@db/nova?charset=utf8', 'mysql+pymysql://nova:****@db/nova?charset=utf8'],
  ['mysql+pymysql://NOVA:S%40cret@DB.Example.COM:3306/nova_api?charset=utf8#frag', 'mysql+pymysql://NOVA:****@DB.Example.COM:3306/nova_api?charset=utf8#frag'],
  ['mysql+pymysql://u:p@[::1]:3306/db', 'mysql+pymysql://u:****@[::1]:3306/db'],
  ['rabbit://a:b@H1:5672,c:d@[fe80::1%eTh0]:5673/vh?x=1', 'rabbit://a:****@[fe80::1%eTh0]:5673/vh?x=1'],
  ['mysql+pymysql://u:p@ss@host/db', 'mysql+pymysql://u:****@host/db'],
  ['rabbit://u:p:q@h:1:2/v', 'rabbit://u:****@h:1:2/v'],
  ['rabbit://u:@h/v', 'rabbit://u:****@h/v'],
  ['rabbit://:p@h/v', 'rabbit://:****@h/v'],
  ['rabbit://guest@h:5672//', 'rabbit://guest@h:5672//'],
  ['rabbit://h1:5672/', 'rabbit://h1:5672/'],
  ['rabbit://h,i/v', 'rabbit://h,i/v'],
  ['rabbit://@h:/v', 'rabbit://@h:/v'],
  ['rabbit://u:p@h/v#frag?x', 'rabbit://u:****@h/v#frag?x'],
  // urlunsplit drops an empty netloc unless the scheme is a "netloc" one.
  ['sqlite:////tmp/x.db', 'sqlite://tmp/x.db'],
  ['sqlite:///rel.db', 'sqlite:/rel.db'],
  ['sqlite://', 'sqlite:'],
  ['file:///etc', 'file:///etc'],
  // ";params" are split off and re-joined only when non-empty (http uses params).
  ['http://h/p;x?q#f', 'http://h/p;x?q#f'],
  ['http://h/p;?q', 'http://h/p?q'],
  ['http://u:p@h:80/a;b;c/d;e?q', 'http://u:****@h:80/a;b;c/d;e?q'],
  // Leading spaces are stripped and tabs removed (CVE-2023-24329 / bpo-43882).
  [' rabbit://u:p\t@h/', 'rabbit://u:****@h/'],
  ['rabbit:u:p@h', 'rabbit:u:p@h'],
  ['a+b-c.d://x:y@z/p', 'a+b-c.d://x:****@z/p'],
  ['mysql://h:abc/db', 'mysql://h:abc/db'],
  ['', ''],
];

describe('maskNovaUrl', () => {
  it.each(NOVA_MASK)('%j → %j', (input, output) => {
    expect(maskNovaUrl(input)).toBe(output);
  });

  it('keeps null', () => {
    expect(maskNovaUrl(null)).toBeNull();
  });

  it('masks where Nova would leak: an unencoded "/" in a password ends urlparse\'s netloc', () => {
    // Nova prints this unchanged; SQLAlchemy reads the password as "p/S3cr3tMarker".
    const out = maskNovaUrl('mysql+pymysql://nova:p/S3cr3tMarker@db/nova') ?? '';
    expect(out).not.toContain('S3cr3tMarker');
    expect(out).toBe('mysql+pymysql://nova:****@db/nova');
  });

  it('masks where Nova would leak: a scheme urlparse does not recognise leaves the netloc in the path', () => {
    // Nova prints "1abc://x:S3cr3tMarker@z/" as is.
    expect(maskNovaUrl('1abc://x:S3cr3tMarker@z/')).toBe('1abc://x:****@z/');
  });

  it('falls back to redaction where urlparse raises (Nova would crash)', () => {
    expect(maskNovaUrl('rabbit://u:S3cr3tMarker@[::1')).toBe('rabbit://u:****@[::1');
  });
});

const REDACT: readonly (readonly [input: string, output: string])[] = [
  ['mysql+pymysql://nova:S3cr3tMarker@db:3306/nova', 'mysql+pymysql://nova:****@db:3306/nova'],
  ['cannot connect to mysql://root:S3cr3tMarker@127.0.0.1/nova_api: refused', 'cannot connect to mysql://root:****@127.0.0.1/nova_api: refused'],
  ['rabbit://a:S3cr3tMarker@h1:5672,c:S3cr3tMarker@h2:5672/v', 'rabbit://a:****@h1:5672,c:****@h2:5672/v'],
  ['rabbit://a:S3cr3tMarker@h1:5672,h2:5672,c:S3cr3tMarker@h3/v', 'rabbit://a:****@h1:5672,h2:****@h3/v'],
  ['mysql://nova:S3cr3t@Marker@db/nova', 'mysql://nova:****@db/nova'],
  ['mysql://nova:S3cr3t/Marker@db/nova', 'mysql://nova:****@db/nova'],
  ['mysql://nova:S3cr3t?Marker@db/nova', 'mysql://nova:****@db/nova'],
  ['mysql://nova:S3cr3tMarker@db/nova?charset=utf8&x=a@b', 'mysql://nova:****@db/nova?charset=utf8&x=a@b'],
  ['mysql://db/nova?user=nova&password=S3cr3tMarker&charset=utf8', 'mysql://db/nova?user=nova&password=****&charset=utf8'],
  ['two: mysql://a:S3cr3tMarker@h/x and rabbit://b:S3cr3tMarker@r/', 'two: mysql://a:****@h/x and rabbit://b:****@r/'],
  ['"mysql://a:S3cr3tMarker@h/x"', '"mysql://a:****@h/x"'],
  ['mysql://db:3306/nova', 'mysql://db:3306/nova'],
  ['rabbit://guest@h:5672/', 'rabbit://guest@h:5672/'],
  ['no url here', 'no url here'],
  ['none:///', 'none:///'],
  ['', ''],
];

describe('redactUrl', () => {
  it.each(REDACT)('%j → %j', (input, output) => {
    expect(redactUrl(input)).toBe(output);
  });

  it('never leaks the marker password in any URL shape', () => {
    const shapes = [
      'mysql+pymysql://nova:PW@db/nova',
      'mysql+pymysql://nova:PW@[::1]:3306/nova?charset=utf8',
      'mysql+pymysql://nova:pre,PW@db/nova',
      'mysql+pymysql://nova:PW:x@db/nova',
      'mysql+pymysql://nova:P#W@db/nova',
      'rabbit://u1:PW@h1:5672,u2:PW@h2:5672,u3:PW@h3:5672/vhost',
      'rabbit://u1:PW@h1,u2:PW@h2/',
      'text before rabbit://u:PW@h/ text after mysql://x:PW@y/z',
      'mysql://db/nova?password=PW',
      'mysql://db/nova?a=1&PASSWORD=PW',
      'mysql://u:PW@h/db\nsecond line mysql://u:PW@h/db',
    ];
    for (const shape of shapes) {
      const text = shape.replaceAll('PW', 'S3cr3tMarker');
      expect(redactUrl(text), text).not.toContain('S3cr3tMarker');
    }
  });

  it('does not throw on odd input', () => {
    for (const text of ['://', 'x://', 'x://@', 'x://:@', '@@@://::::@@@', 'a://b://c:d@e', '\u0000://\uffff']) {
      expect(() => redactUrl(text)).not.toThrow();
    }
  });
});
