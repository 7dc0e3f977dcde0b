//! Cues of the tasks that stay local: greetings and chat, quick facts,
//! memory, notes, files, shell, small edits, reminders, summaries of
//! pasted text, translation.

use super::{Category as C, Cue, Group, Object, Verb};

#[rustfmt::skip]
pub(super) const GROUPS: &[Group] = &[
    Group {
        cue: Cue::Greeting,
        patterns: &[
            "hi", "hii", "hey", "heya", "hello", "hiya", "yo", "howdy", "good morning",
            "good afternoon", "good evening", "morning", "gm", "hola", "buenos días",
            "buenas tardes", "buenas", "bonjour", "salut", "coucou", "bonsoir", "hallo",
            "guten morgen", "guten tag", "guten abend", "moin", "servus", "olá", "oi", "bom dia",
            "boa tarde", "привет", "здравствуй*", "доброе утро", "добрый день", "добрый вечер",
            "おはよう", "こんにちは", "こんばんは", "你好", "您好", "早上好", "早安", "晚上好",
            "ciao", "buongiorno",
        ],
    },
    Group {
        cue: Cue::Thanks,
        patterns: &[
            "thanks", "thank you", "thank u", "thx", "ty", "tysm", "cheers", "much appreciated",
            "appreciate it", "gracias", "muchas gracias", "merci", "merci beaucoup", "danke",
            "danke dir", "dankeschön", "vielen dank", "valeu", "obrigado", "obrigada", "спасибо",
            "благодарю", "ありがとう", "どうも", "谢谢", "多谢", "感谢", "grazie", "perfect",
            "great", "awesome", "nice", "cool", "ok", "okay", "k", "lol", "lmao", "haha", "hahaha",
            "yay", "wow", "parfait", "genial", "super", "perfeito", "ótimo", "отлично", "супер",
            "すごい", "完美", "好的", "got it", "sounds good", "no worries", "de nada",
        ],
    },
    Group {
        cue: Cue::Intent(C::Chat, 2.5),
        patterns: &[
            "how are you", "how r u", "how are u", "how's it going", "how is it going",
            "how's your day", "how was your day", "what's up", "whats up", "wassup", "sup",
            "tell me a joke", "a joke", "joke", "jokes", "good night", "goodnight", "night night",
            "talk tomorrow", "talk later", "ttyl", "see you", "see ya", "bye", "goodbye", "bye bye",
            "so tired", "didn't sleep", "can't sleep", "i miss you", "love you", "you're the best",
            "fun fact", "cheer me up", "i'm bored", "cómo estás", "qué tal", "buenas noches",
            "ça va", "comment vas tu", "comment ça va", "bonne nuit", "à demain", "wie geht's",
            "wie geht es dir", "gute nacht", "bis morgen", "tudo bem", "como vai", "como você está",
            "boa noite", "как дела", "как ты", "спокойной ночи", "お元気", "元気", "おやすみ",
            "最近どう", "你好吗", "晚安", "最近怎么样",
        ],
    },
    Group {
        cue: Cue::Intent(C::Chat, 1.5),
        patterns: &[
            "tired", "exhausted", "bored", "long day", "ugh", "fried", "anyway", "anyways",
            "recommend", "suggest", "feeling", "movie", "movies", "cansado", "cansada", "fatigué",
            "устал", "устала", "疲れた", "累了",
        ],
    },
    Group {
        cue: Cue::Object(Object::ShortText),
        patterns: &[
            "haiku", "limerick", "poem", "short poem", "text", "quick text", "text message",
            "message", "sms", "tweet", "caption", "slogan", "tagline", "nickname", "pun",
            "playlist", "recipe", "shopping list", "grocery list", "quick note", "quick email",
            "short email", "quick reply", "short reply", "quick message", "birthday message",
            "birthday card", "thank you note", "poema", "mensaje", "mensagem", "poème", "gedicht",
            "стих*", "сообщение", "俳句", "短信",
        ],
    },
    Group {
        cue: Cue::Intent(C::QuickFact, 1.5),
        patterns: &[
            "what's", "what is", "whats", "what are", "what was", "who is", "who's", "who was",
            "who wrote", "who invented", "who made", "who won", "when did", "when was", "when is",
            "when does", "where is", "where's", "where are", "how many", "how much", "how far",
            "how long", "how tall", "how old", "how big", "how heavy", "what time", "what day",
            "what date", "what year", "what does", "what do", "define", "definition of",
            "meaning of", "stand for", "stands for", "how do you spell", "spell", "convert",
            "weather", "temperature", "capital of", "capital", "population", "default port",
            "is it true", "cuántos", "cuántas", "cuánto", "cuál es", "qué es", "quién", "cuándo",
            "dónde", "habitantes", "quelle est", "quel est", "c'est quoi", "qui est", "qui a",
            "quand", "où est", "combien", "hauteur", "wie spät", "wie viel*", "wie hoch", "wie alt",
            "wie weit", "was ist", "wer ist", "wer hat", "wann", "wo ist", "hauptstadt", "qual é",
            "quantos", "quantas", "quanto", "o que é", "quem", "quando", "onde", "сколько", "какой",
            "какая", "какое", "кто", "когда", "где", "что такое", "столица", "何", "いつ", "どこ",
            "誰", "高さ", "いくつ", "何時", "とは", "什么", "多少", "几", "哪里", "谁", "首都",
            "是什么", "哪个",
        ],
    },
    Group {
        // Asking for brevity: a careful user expects a small answer.
        cue: Cue::Intent(C::QuickFact, 2.0),
        patterns: &[
            "in one line", "in one sentence", "in a sentence", "one word", "in one word", "briefly",
            "in a few words", "short answer", "yes or no", "en una línea", "en una frase",
            "en une ligne", "en une phrase", "in einem satz", "kurz und knapp", "em uma linha",
            "em uma frase", "в одну строку", "одним предложением", "一句话", "一言で",
        ],
    },
    Group {
        cue: Cue::Intent(C::QuickFact, 1.0),
        patterns: &[
            "quick one", "quick question", "quickly", "real quick", "how do i", "how to",
        ],
    },
    Group {
        cue: Cue::Intent(C::MemoryRecall, 3.0),
        patterns: &[
            "what did i say", "what did i tell you", "what did i write", "what did i mention",
            "did i mention", "did i tell you", "have i told you", "have i mentioned",
            "do you remember", "remember when", "remember what", "what was that", "that thing i",
            "i told you about", "what i told you", "what i said", "remind me what", "remind me how",
            "remind me which", "remind me who", "remind me where", "recall",
            "what do you know about me", "you suggested", "you recommended", "you told me",
            "you mentioned", "you said", "qué te dije", "te dije", "te conté", "te comenté",
            "recuerdas", "te acuerdas", "qué dije", "je t'avais dit", "je t'ai dit",
            "tu te souviens", "te rappelles tu", "t'avais dit", "hab ich dir", "habe ich dir",
            "hab ich gesagt", "habe ich gesagt", "erinnerst du dich", "weißt du noch",
            "eu te disse", "te disse", "te falei", "você lembra", "se lembra", "lembra do que",
            "lembra o que", "что я говорил", "что я говорила", "я говорил", "я говорила",
            "я тебе говорил", "я рассказывал", "помнишь", "что я писал", "話した", "言った",
            "覚えてる", "だっけ", "我说过", "我跟你说过", "我提到过", "还记得", "记得我",
        ],
    },
    Group {
        cue: Cue::Intent(C::MemoryRecall, 1.5),
        patterns: &["remember", "you remember", "remember the", "remember my"],
    },
    Group {
        // References to an earlier conversation: context, not the ask.
        cue: Cue::Intent(C::MemoryRecall, 1.0),
        patterns: &[
            "we talked about", "we discussed", "we sketched", "we made", "we planned", "last time",
            "the other day", "last week", "hablamos", "on en a parlé", "besprochen", "conversamos",
            "мы обсуждали", "前に", "上次",
        ],
    },
    Group {
        cue: Cue::Lead(C::Note, 3.0),
        patterns: &[
            "remember that", "remember this", "note that", "make a note", "take a note",
            "note down", "note this", "jot down", "write down", "keep in mind", "don't forget that",
            "save to memory", "add to memory", "add to my notes", "memorize", "merk dir",
            "merke dir", "notier*", "schreib dir auf", "anota", "apunta", "recuerda que",
            "toma nota", "note que", "retiens que", "n'oublie pas que", "prends note", "anote",
            "lembre se", "guarde isso", "запомни", "запиши", "覚えておいて", "覚えといて",
            "メモして", "记住", "记一下", "记下",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Show),
        patterns: &[
            "show", "show me", "open", "read", "read me", "cat", "list", "display", "print", "find",
            "search", "look for", "locate", "grep", "what's in", "muestra", "muéstrame", "abre",
            "lee", "busca", "lista", "encuentra", "montre", "montre moi", "ouvre", "lis", "affiche",
            "cherche", "trouve", "zeig", "zeige", "zeig mir", "öffne", "lies", "such*", "finde",
            "liste", "mostre", "mostra", "abra", "leia", "procure", "busque", "encontre", "покажи",
            "открой", "прочитай", "найди", "выведи", "見せて", "開いて", "読んで", "探して", "显示",
            "打开", "读取", "查找", "列出",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Save),
        patterns: &[
            "save", "store", "guarda", "guardar", "salva", "salve", "guarde", "enregistre",
            "sauvegarde", "speicher*", "сохрани", "保存",
        ],
    },
    Group {
        // Saving pasted text: the paste is the content, whatever it is.
        cue: Cue::Lead(C::FileTask, 3.5),
        patterns: &[
            "save this", "save it", "save these", "save that", "store this", "write this to",
            "write this into", "write this in", "write it to", "write that to", "put this in",
            "put this into", "put it in", "put it into", "paste this into", "dump this into",
            "guarda esto", "guarda este", "guárdalo", "salve este", "salve isto", "salve isso",
            "salva isso", "salva este", "enregistre ceci", "enregistre ça", "enregistre ce",
            "sauvegarde ce", "sauvegarde ça", "speichere das", "speichere dies", "speichere diesen",
            "сохрани это", "сохрани в",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::FileOp),
        patterns: &[
            "rename", "move", "copy", "delete", "remove", "rm", "mv", "cp", "mkdir", "duplicate",
            "zip", "unzip", "compress", "archive", "download", "renombra", "mueve", "copia",
            "borra", "elimina", "renomme", "déplace", "copie", "supprime", "efface", "benenne*",
            "verschieb*", "kopier*", "lösch*", "renomeie", "mova", "apague", "exclua", "переименуй",
            "перемести", "скопируй", "удали", "削除", "コピー", "移動", "删除", "复制", "移动",
            "重命名",
        ],
    },
    Group {
        cue: Cue::Object(Object::File),
        patterns: &[
            "file", "files", "folder", "folders", "directory", "directories", "dir",
            "markdown files", "log files", "downloads", "desktop", "workspace", "archivo",
            "archivos", "fichero", "ficheros", "carpeta", "carpetas", "fichier", "fichiers",
            "dossier", "dossiers", "répertoire", "datei", "dateien", "ordner", "verzeichnis",
            "arquivo", "arquivos", "pasta", "pastas", "файл*", "папк*", "каталог*", "ファイル",
            "フォルダ", "文件", "文件夹", "目录",
        ],
    },
    Group {
        cue: Cue::Object(Object::Path),
        patterns: &["#"],
    },
    Group {
        cue: Cue::Object(Object::Quoted),
        patterns: &["\""],
    },
    Group {
        cue: Cue::Object(Object::InlineCode),
        patterns: &["`"],
    },
    Group {
        cue: Cue::LeadAtStart(C::ShellTask, 3.0),
        patterns: &[
            "run", "execute", "exec", "restart", "reboot", "kill", "install", "uninstall", "ping",
            "ssh", "mount", "unmount", "ejecuta", "corre", "reinicia", "instala", "lance",
            "redémarre", "installe", "führe", "starte", "installiere", "rode", "roda", "reinicie",
            "instale", "запусти", "выполни", "перезапусти", "установи", "実行", "再起動", "运行",
            "执行", "重启",
        ],
    },
    Group {
        cue: Cue::Intent(C::ShellTask, 3.5),
        patterns: &[
            "disk space", "disk usage", "free space", "space left", "cpu", "memory usage", "ram",
            "processes", "running processes", "uptime", "load average", "is running",
            "is it running", "running right now", "listening on", "open ports", "git status",
            "git pull", "git log", "git diff", "docker ps", "systemctl", "ls", "df", "ps",
            "ip address", "my ip", "htop", "procesos", "espacio en disco", "processus",
            "espace disque", "prozesse", "speicherplatz", "laufenden", "processos",
            "espaço em disco", "процессы", "место на диске", "ディスク", "プロセス", "磁盘", "进程",
        ],
    },
    Group {
        cue: Cue::Intent(C::ShellTask, 1.0),
        patterns: &[
            "service", "daemon", "port", "check if", "check whether", "start", "stop", "running",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Change),
        patterns: &[
            "change", "replace", "set", "edit", "modify", "swap", "update", "mark", "uncomment",
            "comment out", "capitalize", "indent", "cambia", "reemplaza", "sustituye", "modifica",
            "edita", "remplace", "modifie", "ändere", "ersetze", "bearbeite", "setze", "mude",
            "altere", "substitua", "troque", "edite", "замени", "измени", "поменяй", "отредактируй",
            "変更", "置き換え", "修改", "替换", "改成",
        ],
    },
    Group {
        cue: Cue::Object(Object::EditTarget),
        patterns: &[
            "typo", "typos", "spelling", "misspelling", "grammar", "title", "heading", "variable",
            "the variable", "setting", "value", "errata", "faute", "faute de frappe", "tippfehler",
            "опечатк*", "título", "titre", "titel", "заголовок", "変数", "变量", "variável",
            "переменн*",
        ],
    },
    Group {
        cue: Cue::Intent(C::SimpleEdit, 1.5),
        patterns: &[
            "to the top of", "to the bottom of", "at the top of", "at the end of", "as done",
            "should be", "instead of",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Add),
        patterns: &[
            "add", "append", "prepend", "insert", "añade", "agrega", "ajoute", "füge", "adicione",
            "acrescente", "добавь", "追加", "添加",
        ],
    },
    Group {
        cue: Cue::Lead(C::Reminder, 3.5),
        patterns: &[
            "remind", "remind me", "remind us", "reminder to", "reminder for", "reminder at",
            "reminder on", "reminder every", "a reminder", "set a reminder", "an alarm",
            "set an alarm", "alarm for", "wake me", "wake me up", "on my calendar",
            "to my calendar", "in my calendar", "on the calendar", "to the calendar", "my agenda",
            "recuérdame", "recordarme", "recordatorio", "avísame", "rappelle moi", "rappelle nous",
            "un rappel", "erinnere mich", "erinner mich", "erinnere uns", "erinnerung", "me lembra",
            "me lembre", "lembre me", "lembrete", "me avisa", "напомни*", "напоминание",
            "リマインド", "思い出させて", "アラーム", "提醒", "闹钟",
        ],
    },
    Group {
        cue: Cue::Object(Object::Reminder),
        patterns: &[
            "reminder", "reminders", "alarm", "calendar", "calendar event", "appointment",
        ],
    },
    Group {
        cue: Cue::Intent(C::Reminder, 2.0),
        patterns: &["schedule", "every morning", "every evening", "every day at"],
    },
    Group {
        cue: Cue::Intent(C::Reminder, 0.5),
        patterns: &[
            "tomorrow", "tonight", "this evening", "next week", "next month", "daily", "weekly",
            "every day", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
            "sunday", "mañana", "demain", "morgen", "amanhã", "завтра", "明日", "明天",
        ],
    },
    Group {
        cue: Cue::LeadWithMaterial(C::Summarize, 3.0),
        patterns: &[
            "summarize", "summarise", "summary", "sum up", "sum it up", "tldr", "tl dr", "gist",
            "key points", "main points", "action items", "recap", "condense", "how many times",
            "how often", "extract", "pull out", "resume", "resumen", "resúmelo", "resumir",
            "résumer", "synthèse", "fasse", "zusammenfass*", "kurz zusammen", "resuma", "resumo",
            "кратко", "перескажи", "резюмируй", "суммируй", "выжимк*", "要約", "まとめて", "总结",
            "概括", "摘要",
        ],
    },
    Group {
        cue: Cue::Verb(Verb::Translate),
        patterns: &[
            "translate", "translation", "how do you say", "how to say", "how do i say", "traduce",
            "tradúceme", "traducir", "cómo se dice", "traduis", "traduire", "traduction",
            "comment dit on", "übersetz*", "wie sagt man", "traduza", "traduz", "como se diz",
            "переведи", "перевод*", "как сказать", "как будет", "翻訳", "訳して", "翻译", "怎么说",
        ],
    },
    Group {
        cue: Cue::Neutral,
        patterns: &[
            "planning to", "going to", "make sure", "go ahead", "time to go", "ready to go",
            "have to go", "got to go", "gotta go", "need to go", "want to go", "to go to",
            "let's go", "on the go", "good to go", "zip code", "no idea", "on my way",
            "post office",
        ],
    },
];
