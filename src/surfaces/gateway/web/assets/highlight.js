// A small highlighter for code blocks: keywords, strings, comments,
// numbers, for the languages models write most. Output is spans with
// textContent (classes hl-kw, hl-str, hl-com, hl-num, hl-lit, hl-add,
// hl-del, hl-hunk); unknown languages stay plain text.

const words = (s) => new Set(s.split(' '));

const C_LIKE = {
  line: ['//'],
  block: ['/*', '*/'],
  quotes: '"\'',
  lit: words('true false null nullptr NULL'),
};

const LANGS = {
  js: {
    ...C_LIKE,
    quotes: '"\'`',
    kw: words('async await break case catch class const continue default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while yield interface type enum implements readonly'),
    lit: words('true false null undefined NaN Infinity'),
  },
  rust: {
    ...C_LIKE,
    quotes: '"',
    kw: words('as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while Some None Ok Err'),
    lit: words('true false'),
  },
  python: {
    line: ['#'],
    quotes: '"\'',
    kw: words('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case self'),
    lit: words('True False None'),
  },
  bash: {
    line: ['#'],
    // As bash reads it (an approval shows what will run): `#` starts a
    // comment only at a word's start, and `'…'` escapes nothing.
    wordComment: true,
    rawQuote: "'",
    quotes: '"\'',
    kw: words('if then else elif fi for while until do done case esac in function return local export set unset echo cd exit source sudo'),
    lit: words('true false'),
  },
  go: {
    ...C_LIKE,
    quotes: '"\'`',
    kw: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'),
    lit: words('true false nil iota'),
  },
  c: {
    ...C_LIKE,
    kw: words('auto break case char class const continue default do double else enum extern float for goto if include define int long namespace new private protected public register return short signed sizeof static struct switch template this throw try catch typedef union unsigned using virtual void volatile while bool final override package import extends implements'),
  },
  sql: {
    line: ['--'],
    block: ['/*', '*/'],
    quotes: '\'"',
    kw: words('select from where insert into values update set delete create table drop alter add index join left right inner outer on group by order having limit offset as and or not null is in like distinct union all primary key references default begin commit rollback'),
    lit: words('true false null'),
    caseless: true,
  },
  toml: {
    line: ['#'],
    quotes: '"\'',
    kw: new Set(),
    lit: words('true false null'),
  },
  json: {
    quotes: '"',
    kw: new Set(),
    lit: words('true false null'),
  },
};

const ALIASES = {
  javascript: 'js', jsx: 'js', ts: 'js', typescript: 'js', tsx: 'js', mjs: 'js',
  rs: 'rust', py: 'python', python3: 'python',
  sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', shellscript: 'bash',
  golang: 'go',
  cpp: 'c', 'c++': 'c', h: 'c', hpp: 'c', java: 'c', cs: 'c', csharp: 'c', kotlin: 'c', swift: 'c',
  yaml: 'toml', yml: 'toml', ini: 'toml', cfg: 'toml', conf: 'toml',
  jsonc: 'json', json5: 'json',
  postgres: 'sql', sqlite: 'sql', mysql: 'sql',
};

function span(cls, s) {
  const node = document.createElement('span');
  node.className = cls;
  node.textContent = s;
  return node;
}

/** Appends `source`, highlighted as `lang`, to `parent`. */
export function highlight(source, lang, parent) {
  const name = ALIASES[lang] || lang;
  if (name === 'diff' || name === 'patch') return diff(source, parent);
  const spec = LANGS[name];
  if (!spec || source.length > 200_000) {
    parent.append(document.createTextNode(source));
    return parent;
  }
  tokens(source, spec, parent);
  return parent;
}

function diff(source, parent) {
  for (const line of source.split('\n')) {
    let cls = null;
    if (line.startsWith('+')) cls = 'hl-add';
    else if (line.startsWith('-')) cls = 'hl-del';
    else if (line.startsWith('@@')) cls = 'hl-hunk';
    parent.append(cls ? span(cls, line) : document.createTextNode(line), document.createTextNode('\n'));
  }
  return parent;
}

function tokens(src, spec, parent) {
  let plain = '';
  const flush = () => {
    if (plain) parent.append(document.createTextNode(plain));
    plain = '';
  };
  const emit = (cls, s) => {
    flush();
    parent.append(span(cls, s));
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const wordStart = !spec.wordComment || i === 0 || /\s/.test(src[i - 1]);
    const lineComment = wordStart && (spec.line || []).find((m) => src.startsWith(m, i));
    if (lineComment) {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? src.length : end;
      emit('hl-com', src.slice(i, stop));
      i = stop;
      continue;
    }
    if (spec.block && src.startsWith(spec.block[0], i)) {
      const end = src.indexOf(spec.block[1], i + spec.block[0].length);
      const stop = end < 0 ? src.length : end + spec.block[1].length;
      emit('hl-com', src.slice(i, stop));
      i = stop;
      continue;
    }
    if (spec.quotes.includes(c)) {
      let k = i + 1;
      while (k < src.length && src[k] !== c) {
        if (src[k] === '\\' && c !== spec.rawQuote) k += 1;
        else if (src[k] === '\n' && c !== '`' && spec !== LANGS.python) break;
        k += 1;
      }
      const str = src.slice(i, k + 1);
      // A command substitution runs inside bash's double quotes: not
      // shown as inert string text.
      if (spec.rawQuote && c === '"' && /\$\(|`/.test(str)) plain += str;
      else emit('hl-str', str);
      i = k + 1;
      continue;
    }
    if (/[0-9]/.test(c) && !/[\w$]/.test(src[i - 1] || ' ')) {
      const m = /^(0x[0-9a-fA-F_]+|\d[\d_]*(\.\d+)?([eE][+-]?\d+)?)/.exec(src.slice(i, i + 40));
      emit('hl-num', m[0]);
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z_$]/.test(c) && !/[\w$]/.test(src[i - 1] || ' ')) {
      const m = /^[A-Za-z_$][\w$]*/.exec(src.slice(i, i + 200));
      const word = m[0];
      const key = spec.caseless ? word.toLowerCase() : word;
      if (spec.kw.has(key)) emit('hl-kw', word);
      else if (spec.lit && spec.lit.has(key)) emit('hl-lit', word);
      else plain += word;
      i += word.length;
      continue;
    }
    plain += c;
    i += 1;
  }
  flush();
}
