//! The input box and the slash commands: sessions and the input agree, a
//! message may start with `/`, completion, commands that say what they do
//! (defects 3, 4, 5, 6, 10, 14) and the signs of life while a turn runs.
