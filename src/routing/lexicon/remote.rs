//! Cues of the tasks that go remote: writing, reviewing and debugging code,
//! multi-step reasoning, planning, analysis and long-form writing; and the
//! verbs and objects whose pairing decides between them and local tasks.

use super::{Category as C, Cue, Group, Object, Verb};

#[rustfmt::skip]
pub(super) const GROUPS: &[Group] = &[
    Group {
        cue: Cue::Verb(Verb::Make),
        patterns: &[
            "write", "write me", "create", "build", "make", "make me", "implement*", "generate",
            "develop", "scaffold", "set up", "draft", "compose", "design", "produce", "prepare",
            "put together", "come up with", "give me", "craft", "need a", "need an", "want a",
            "would like a", "escribe", "escríbeme", "escribir", "crea", "créame", "construye",
            "haz", "hazme", "genera", "desarrolla", "redacta", "écris", "écris moi", "écrire",
            "crée", "construis", "fais", "fais moi", "génère", "développe", "rédige", "schreib",
            "schreibe", "schreib mir", "erstelle", "erstell", "baue", "bau", "mach", "mache",
            "generiere", "entwickle", "programmiere", "verfasse", "lege", "escreva", "escreve",
            "crie", "cria", "construa", "faça", "faz", "gere", "desenvolva", "programe", "redija",
            "monte", "напиши", "написать", "создай", "сделай", "реализуй", "сгенерируй",
            "разработай", "составь", "запрограммируй", "書いて", "書く", "作って", "実装", "作成",
            "生成", "開発", "写", "编写", "实现", "创建", "开发", "做一个", "帮我写",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Rewrite),
        patterns: &[
            "refactor*", "rewrite", "port this", "port it", "port the", "port my", "port that",
            "convert this", "convert it", "migrate this", "optimize", "optimise", "speed up",
            "clean up", "simplify", "modernize", "restructure", "make it faster",
            "make this faster", "reescribe", "optimiza", "réécris", "refaktorier*", "optimiere",
            "schreibe um", "schreib um", "refatore", "reescreva", "otimize", "отрефактор*",
            "рефактор*", "перепиши", "оптимизируй", "リファクタ*", "書き直して", "重构", "重写",
            "优化",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Fix),
        patterns: &[
            "fix", "debug*", "troubleshoot", "repair", "resolve", "arregla", "corrige", "soluciona",
            "répare", "débogue", "behebe", "repariere", "korrigiere", "conserte", "corrija",
            "исправь", "почини", "отладь", "修复", "直して", "修正",
        ],
    },
    Group {
        cue: Cue::Object(Object::Bug),
        patterns: &[
            "bug", "bugs", "error", "errors", "crash", "exception", "panic", "leak", "memory leak",
            "race condition", "deadlock", "stack trace", "traceback", "failing test",
            "failing tests", "fehler", "erreur", "erreurs", "erro", "erros", "ошибк*", "баг*",
            "バグ", "エラー", "错误", "异常", "bogue", "fallo",
        ],
    },
    Group {
        cue: Cue::Intent(C::Debugging, 3.0),
        patterns: &[
            "what's wrong", "whats wrong", "what is wrong", "what went wrong", "doesn't compile",
            "does not compile", "won't compile", "doesn't build", "won't build", "doesn't work",
            "does not work", "not working", "isn't working", "stopped working", "keeps crashing",
            "crashes", "crashing", "segfaults", "segfault", "segmentation fault", "core dumped",
            "infinite loop", "hangs", "freezes", "returns a 500", "returns 500", "500 error",
            "internal server error", "throws", "raises", "fails with", "failing", "broken",
            "panics", "panicked", "out of bounds", "errors out", "how do i fix", "how to fix",
            "how can i fix", "how do i debug", "what could cause", "what's causing",
            "what is causing", "por qué falla", "no funciona", "falla", "da error", "me da error",
            "no compila", "plante", "ne marche pas", "ne fonctionne pas", "ne compile pas",
            "funktioniert nicht", "geht nicht", "stürzt ab", "absturz", "kompiliert nicht",
            "não funciona", "dá erro", "falha", "não compila", "не работает", "падает",
            "что не так", "не компилируется", "ошибка при", "動かない", "落ちる", "不工作", "崩溃",
            "报错", "cannot read properties", "is not defined", "undefined is not", "null pointer",
            "nullpointer*", "module not found", "no module named",
        ],
    },
    Group {
        cue: Cue::Intent(C::Debugging, 1.5),
        patterns: &[
            "why does this", "why is this", "why do i get", "why am i getting", "any idea why",
            "since the deploy", "after the deploy", "after updating", "after the update", "fails",
            "failed", "fail", "infinite", "por que falha", "pourquoi ça", "почему не",
            "なぜ動かない",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Review),
        patterns: &[
            "review", "code review", "look over", "go over", "look at this", "take a look",
            "check my code", "check this code", "audit", "critique", "what do you think of",
            "what do you think about", "thoughts on", "feedback on", "opinion on", "is this safe",
            "is this correct", "is this right", "any issues", "what does this", "thoughts",
            "revisa", "revisar", "échale un vistazo", "relis", "revois", "reviewen", "schau dir",
            "revise", "ревью", "レビュー", "审查",
        ],
    },
    Group {
        cue: Cue::Intent(C::CodeReview, 2.0),
        patterns: &[
            "time complexity", "big o", "complexity of", "sql injection", "injection", "xss",
            "csrf", "vulnerab*", "thread safe", "memory safe", "code smell", "best practice*",
            "pull request", "merge request", "before i merge",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Explain),
        patterns: &[
            "explain", "explica", "explícame", "explique", "erkläre", "erklär", "объясни", "説明",
            "解释",
        ],
    },
    Group {
        cue: Cue::Object(Object::Code),
        patterns: &[
            "function", "functions", "method", "class", "struct", "enum", "trait", "interface",
            "module", "script", "scripts", "program", "code", "snippet", "app", "application",
            "api", "rest api", "endpoint", "cli", "command line tool", "library", "crate", "parser",
            "lexer", "tokenizer", "compiler", "interpreter", "regex", "regexp",
            "regular expression", "query", "sql query", "algorithm", "data structure", "trie",
            "binary tree", "binary search tree", "linked list", "queue", "hash map", "hashmap",
            "heap", "server", "backend", "frontend", "middleware", "handler", "component", "hook",
            "database migration", "schema", "dockerfile", "makefile", "workflow", "github action",
            "ci pipeline", "scraper", "crawler", "bot", "plugin", "plugin loader",
            "browser extension", "microservice", "websocket", "rate limiter", "cache", "scheduler",
            "validator", "serializer", "iterator", "macro", "closure", "callback",
            "cron expression", "pagination", "authentication", "importer", "exporter", "loader",
            "wrapper", "sdk", "website", "web app", "webpage", "dashboard", "pr", "diff",
            "this design", "the design", "architecture", "implementation", "bash script",
            "shell script", "función", "funciones", "clase", "consulta", "código", "biblioteca",
            "servidor", "fonction", "fonctions", "classe", "programme", "requête", "bibliothèque",
            "serveur", "funktion", "klasse", "programm", "skript", "abfrage", "bibliothek",
            "função", "programa", "функци*", "класс", "программ*", "скрипт", "код", "запрос",
            "сервер", "библиотек*", "парсер", "関数", "クラス", "プログラム", "スクリプト",
            "コード", "ミドルウェア", "二分探索木", "パーサ", "サーバ", "函数", "程序", "脚本",
            "代码", "爬虫", "接口", "服务器", "算法",
        ],
    },
    Group {
        cue: Cue::Object(Object::Test),
        patterns: &[
            "test", "tests", "unit test", "unit tests", "test suite", "integration test*",
            "tests unitaires", "pruebas", "prueba", "testes", "тест*", "テスト", "测试",
        ],
    },
    Group {
        cue: Cue::Object(Object::Lang),
        patterns: &[
            "rust", "python", "javascript", "js", "typescript", "golang", "in go", "to go",
            "go code", "go program", "go service", "go function", "java", "kotlin", "swiftui",
            "ruby", "php", "perl", "bash", "zsh", "powershell", "sql", "in c", "c program",
            "c code", "c library", "cpp", "csharp", "fsharp", "haskell", "elixir", "erlang",
            "scala", "clojure", "lua", "zig", "flutter", "in r", "matlab", "node", "nodejs",
            "node js", "deno", "react", "vuejs", "vue js", "svelte", "angular", "nextjs", "next js",
            "django", "flask", "fastapi", "rails", "spring boot", "axum", "actix", "tokio", "html",
            "css", "tailwind", "wasm", "webassembly", "solidity", "verilog", "lisp", "ocaml",
        ],
    },
    Group {
        cue: Cue::Tech,
        patterns: &[
            "async", "await", "thread", "threads", "mutex", "lock free", "pointer", "pointers",
            "borrow", "borrow checker", "lifetime", "lifetimes", "compile", "runtime", "dylib",
            "dlopen", "vtable", "vtables", "symbol", "handles", "vec", "json", "yaml", "http",
            "tcp", "udp", "socket", "database", "db", "postgres", "mysql", "sqlite", "redis",
            "mongodb", "kafka", "docker", "kubernetes", "k8s", "nginx", "linux", "git", "repo",
            "branch", "deploy", "deployment", "monolith", "microservices", "cluster", "raft",
            "paxos", "latency", "throughput", "binary", "dependency", "dependencies", "framework",
            "ssl", "tls", "cors", "oauth", "jwt", "unicode", "utf 8", "llm", "ai agent", "generics",
            "recursion", "stdin", "stdout", "npm", "pip", "cargo", "ci", "package",
        ],
    },
    Group {
        cue: Cue::Intent(C::Reasoning, 3.0),
        patterns: &[
            "step by step", "paso a paso", "étape par étape", "pas à pas", "schritt für schritt",
            "passo a passo", "шаг за шагом", "пошагово", "一步一步", "逐步", "ステップバイステップ",
            "順を追って",
        ],
    },
    Group {
        cue: Cue::Intent(C::Reasoning, 2.5),
        patterns: &[
            "walk me through", "reason through", "prove", "proof", "prove that", "derive",
            "demuestra", "démontre", "beweise", "докажи", "证明", "証明", "think through",
            "brain teaser", "thought experiment", "math problem", "word problem", "logic puzzle",
        ],
    },
    Group {
        cue: Cue::Intent(C::Reasoning, 2.0),
        patterns: &[
            "puzzle", "riddle", "paradox", "monty hall", "explain why", "explícame por qué",
            "explica por qué", "explique pourquoi", "erkläre warum", "explique por que",
            "объясни почему", "能推出", "如果所有", "推理", "acertijo", "énigme", "rätsel",
            "загадк*", "謎", "谜题", "dilemma", "game theory", "expected value",
        ],
    },
    Group {
        cue: Cue::Intent(C::Reasoning, 1.5),
        patterns: &[
            "intuition", "logic", "logically", "undecidable", "halting problem", "why is that",
            "and why", "which ends", "which is more", "trick question", "solve", "resuelve",
            "résous", "löse", "реши", "解いて", "logique", "lógica", "логик*", "論理", "逻辑",
            "inference", "deduce", "infer", "推出", "probability",
        ],
    },
    Group {
        // "why" alone leans to an explanation, not to a hard problem.
        cue: Cue::Intent(C::Reasoning, 0.6),
        patterns: &[
            "why", "por qué", "pourquoi", "warum", "почему", "なぜ", "为什么", "どうして",
        ],
    },
    Group {
        cue: Cue::Conditional,
        patterns: &[
            "if", "suppose", "assuming", "assume", "si", "wenn", "falls", "если", "如果", "もし",
            "what if",
        ],
    },
    Group {
        cue: Cue::Intent(C::Planning, 3.0),
        patterns: &[
            "plan a", "plan an", "plan my", "plan our", "plan the", "plan out", "help me plan",
            "make a plan", "need a plan", "a plan for", "a plan to", "come up with a plan",
            "meal plan", "training plan", "workout plan", "study plan", "itinerary", "roadmap",
            "road map", "planifica", "planifique", "planifie", "planifier", "planear", "planeje",
            "planeja", "спланируй", "составь план", "hoja de ruta", "feuille de route", "fahrplan",
            "roteiro", "itinerario", "itinéraire", "计划一下", "规划", "計画を立てて",
        ],
    },
    Group {
        cue: Cue::Object(Object::Plan),
        patterns: &[
            "plan", "plans", "a schedule", "schedule for", "weekly schedule", "study schedule",
            "strategy", "timeline", "curriculum", "syllabus", "plan de", "plano de", "plano",
            "план", "计划", "計画", "プラン",
        ],
    },
    Group {
        cue: Cue::Intent(C::Analysis, 3.0),
        patterns: &[
            "analyze", "analyse", "analyzing", "compare", "comparison", "contrast", "evaluate",
            "assess", "pros and cons", "tradeoffs", "tradeoff", "trade offs", "trade off",
            "advantages and disadvantages", "deep dive", "break down", "analiza", "analizar",
            "compara", "pros y contras", "ventajas y desventajas", "evalúa", "analyser",
            "avantages et inconvénients", "pour et contre", "évalue", "analysiere", "vergleiche",
            "vor und nachteile", "bewerte", "analise", "analisa", "prós e contras",
            "vantagens e desvantagens", "avalie", "проанализируй", "сравни", "плюсы и минусы",
            "оцени", "за и против", "分析", "比較", "比较", "优缺点", "利弊", "评估",
            "メリットとデメリット", "長所と短所",
        ],
    },
    Group {
        cue: Cue::Intent(C::Analysis, 1.5),
        patterns: &[
            "analysis", "versus", "vs", "which is better", "is it worth", "worth it", "insights",
            "trends", "trend", "what's going on", "анализ",
        ],
    },
    Group {
        cue: Cue::Intent(C::Analysis, 1.0),
        patterns: &["should i"],
    },
    Group {
        cue: Cue::Object(Object::Doc),
        patterns: &[
            "letter", "cover letter", "motivation letter", "essay", "article", "blog post", "blog",
            "post", "linkedin post", "story", "short story", "stories", "novel", "chapter",
            "speech", "eulogy", "wedding speech", "toast", "wedding toast", "vows", "design doc",
            "doc", "readme", "documentation", "docs", "report", "proposal", "press release",
            "newsletter", "bio", "biography", "my resume", "a resume", "cv", "tutorial", "guide",
            "whitepaper", "thesis", "paper", "presentation", "slides", "pitch", "announcement",
            "manifesto", "memo", "screenplay", "carta", "artículo", "ensayo", "cuento", "historia",
            "discurso", "publicación", "documentación", "dokumentation", "informe", "lettre",
            "lettre de motivation", "essai", "dissertation", "histoire", "conte", "discours",
            "rapport", "anschreiben", "bewerbung*", "artikel", "aufsatz", "geschichte",
            "kurzgeschichte", "rede", "bericht", "blogpost", "blogbeitrag", "beitrag",
            "carta de apresentação", "artigo", "redação", "ensaio", "conto", "documentação",
            "relatório", "письмо", "статью", "статья", "эссе", "рассказ", "историю", "речь", "пост",
            "документацию", "документация", "доклад", "記事", "手紙", "物語", "小説", "エッセイ",
            "スピーチ", "ブログ", "ドキュメント", "レポート", "文章", "故事", "小说", "演讲",
            "博客", "文档", "报告", "作文",
        ],
    },
    Group {
        cue: Cue::Object(Object::Email),
        patterns: &[
            "email", "e mail", "mail", "reply", "response", "correo", "courriel", "antwort",
            "resposta", "ответ", "返信", "回复",
        ],
    },
    Group {
        cue: Cue::Depth,
        patterns: &[
            "detailed", "in depth", "in detail", "thorough", "thoroughly", "comprehensive", "long",
            "lengthy", "extensive", "address each", "point by point", "properly", "ausführlich*",
            "detallad*", "détaillé*", "detalhad*", "подробн*", "詳しく", "詳細", "详细",
        ],
    },
    Group {
        cue: Cue::WordsUnit,
        patterns: &[
            "word", "words", "palabras", "mots", "wörter", "palavras", "слов",
        ],
    },
];
