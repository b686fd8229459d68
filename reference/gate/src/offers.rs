//! What a card offers (sections 8 to 15, GATE-CARD-1): the exact key, the family key, and
//! for each one withheld its code and the text the card prints.
//!
//! Pure text processing over the call: touches no file.

use super::codes::Withheld;
use super::lists::never_savable;
use super::tool::Tool;
use super::words::{first_word, has_metacharacter, is_blank, is_chained, is_metacharacter};
use serde::{Deserialize, Serialize};

/// The text for a dangerous line (GATE-DANGER-4).
pub const DANGEROUS_TEXT: &str =
    "It's a recursive delete, so it asks every time: this one can't be saved.";
/// The text for a shell line on Windows (GATE-WIN-2).
pub const WINDOWS_TEXT: &str =
    "On Windows I can't read a command line the way the shell will, so every one of them asks.";
/// The text for a card-only tool (GATE-SCOPE-2).
pub const CARD_ONLY_TEXT: &str =
    "This tool asks every time: it has no standing permission that could be saved.";
/// The text for `execute_code` (GATE-CODE-2).
pub const CODE_TEXT: &str =
    "Code can't be saved as a family: \"always run any code\" is the broadest promise there is.";
/// The text for a line with nothing to run (GATE-READ-4).
pub const EMPTY_TEXT: &str = "There is nothing to run here, so there is nothing to save.";

/// The standing permissions a card offers for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offers {
    /// Whether "always allow this exact line" is on offer.
    pub exact: bool,
    /// Why the exact key is withheld, when it is.
    pub exact_withheld: Option<Withheld>,
    /// The family key on offer, if any.
    pub family: Option<String>,
    /// Why the family key is withheld, when it is.
    pub family_withheld: Option<Withheld>,
    /// The text the card prints for what it withholds, or `None` when nothing is.
    pub text: Option<String>,
}

impl Offers {
    /// Neither key, both for the same reason.
    fn neither(code: Withheld, text: &str) -> Self {
        Offers {
            exact: false,
            exact_withheld: Some(code),
            family: None,
            family_withheld: Some(code),
            text: Some(text.to_string()),
        }
    }

    /// The exact key, the family withheld for `code` with `text`.
    fn exact_only(code: Withheld, text: String) -> Self {
        Offers {
            exact: true,
            exact_withheld: None,
            family: None,
            family_withheld: Some(code),
            text: Some(text),
        }
    }
}

/// Whether `word` can name a family (GATE-FAMILY-6): not empty, no `=` (an environment
/// assignment), no metacharacter.
pub fn is_command_name(word: &str) -> bool {
    !word.is_empty() && !word.contains('=') && !word.bytes().any(is_metacharacter)
}

/// Whether a command name may be a family key (GATE-FAMILY-7): it holds no `/` (a path
/// names one file, and `/usr/bin/r[m]` is not the family `rm`) and no glob character
/// (`*`, `?`, `[`), quoted or not.
pub fn is_family_key(word: &str) -> bool {
    is_command_name(word) && !word.contains(['/', '*', '?', '['])
}

/// The name a card's text uses for the line's command: its first word, cut at the first
/// metacharacter (`ls;pwd` names `ls`), or the raw text up to the first space when the
/// first word cannot be read.
fn display_name(line: &str) -> String {
    let word = match first_word(line) {
        Some(Ok(w)) => w.text.into_owned(),
        _ => line
            .trim_start_matches([' ', '\t'])
            .split([' ', '\t'])
            .next()
            .unwrap_or("")
            .to_string(),
    };
    match word.bytes().position(is_metacharacter) {
        Some(i) => word[..i].to_string(),
        None => word,
    }
}

/// The offers for a call to `tool` with `input`.
///
/// `dangerous` is whether the line is on the dangerous list and `windows` whether the host
/// is Windows; both only matter for `shell`.
///
/// For a shell line the family key is withheld by the first rule that applies, in this
/// order: `empty`, `chained`, `metacharacter`, `not_a_command_name`, then the
/// never-savable group of the first word's last path component. **Choice:** the spec
/// gives no order among them; the chain and metacharacter rules (GATE-CHAIN-1, -2) are
/// stated for every such line, so they come before the first-word rules.
pub fn offers_for(tool: Tool, input: &str, dangerous: bool, windows: bool) -> Offers {
    match tool {
        Tool::McpInstall | Tool::McpConnect => Offers::neither(Withheld::CardOnly, CARD_ONLY_TEXT),
        Tool::ExecuteCode => {
            if input.trim().is_empty() {
                Offers::neither(Withheld::Empty, EMPTY_TEXT)
            } else {
                Offers::exact_only(Withheld::Code, CODE_TEXT.to_string())
            }
        }
        Tool::Shell => shell_offers(input, dangerous, windows),
    }
}

fn shell_offers(line: &str, dangerous: bool, windows: bool) -> Offers {
    if dangerous {
        return Offers::neither(Withheld::Dangerous, DANGEROUS_TEXT);
    }
    if windows {
        return Offers::neither(Withheld::WindowsHost, WINDOWS_TEXT);
    }
    if is_blank(line) {
        return Offers::neither(Withheld::Empty, EMPTY_TEXT);
    }
    if is_chained(line) {
        let name = display_name(line);
        return Offers::exact_only(
            Withheld::Chained,
            format!(
                "This line chains commands, so a rule for \"{name}\" would never match it again."
            ),
        );
    }
    if has_metacharacter(line) {
        let name = display_name(line);
        return Offers::exact_only(
            Withheld::Metacharacter,
            format!(
                "This line holds a shell metacharacter, so a rule for \"{name}\" would never match it again."
            ),
        );
    }
    let first = match first_word(line) {
        Some(Ok(word)) if is_command_name(&word.text) => word.text,
        Some(Ok(word)) => {
            let text = if word.text.is_empty() {
                "The line does not start with a command name, so it can't be saved as a family."
                    .to_string()
            } else {
                format!(
                    "\"{}\" is not a command name, so it can't be saved as a family.",
                    word.text
                )
            };
            return Offers::exact_only(Withheld::NotACommandName, text);
        }
        _ => {
            return Offers::exact_only(
                Withheld::NotACommandName,
                "The first word of this line can't be read, so it can't be saved as a family."
                    .to_string(),
            )
        }
    };
    if let Some(group) = never_savable(&first) {
        return Offers::exact_only(group.code(), group.reason_text(&first));
    }
    if !is_family_key(&first) {
        return Offers::exact_only(
            Withheld::NotACommandName,
            format!(
                "\"{first}\" is a path or a pattern, not a command name, so it can't be saved as a family."
            ),
        );
    }
    Offers {
        exact: true,
        exact_withheld: None,
        family: Some(first.into_owned()),
        family_withheld: None,
        text: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn shell(line: &str) -> Offers {
        offers_for(Tool::Shell, line, false, false)
    }

    #[rstest]
    #[case("ls", "ls")]
    #[case("ls /etc", "ls")]
    #[case("git push", "git")]
    #[case("\"git\" push", "git")]
    #[case("rm x", "rm")]
    #[case("git commit -m 'oops", "git")]
    fn offers_the_first_word(#[case] line: &str, #[case] family: &str) {
        let o = shell(line);
        assert!(o.exact);
        assert_eq!(o.family.as_deref(), Some(family));
        assert_eq!(o.family_withheld, None);
        assert_eq!(o.text, None);
    }

    #[rstest]
    #[case("npm run build && ./deploy.sh", Withheld::Chained)]
    #[case("ls; pwd", Withheld::Chained)]
    #[case("ls | wc", Withheld::Chained)]
    #[case("ls\npwd", Withheld::Chained)]
    #[case("cat < x", Withheld::Metacharacter)]
    #[case("echo $HOME", Withheld::Metacharacter)]
    #[case("$EDITOR x", Withheld::Metacharacter)]
    #[case("PAGER=x git log", Withheld::NotACommandName)]
    #[case("'' x", Withheld::NotACommandName)]
    #[case("'git", Withheld::NotACommandName)]
    #[case("./deploy.sh", Withheld::NotACommandName)]
    #[case("/usr/bin/r[m] x", Withheld::NotACommandName)]
    #[case("'r[m]' x", Withheld::NotACommandName)]
    #[case("bin/tool x", Withheld::NotACommandName)]
    #[case("python3 x.py", Withheld::Interpreter)]
    #[case("/usr/bin/python x.py", Withheld::Interpreter)]
    #[case("sudo ls", Withheld::ExecWrapper)]
    #[case("vim notes.txt", Withheld::PagerEditor)]
    #[case("curl https://example.com", Withheld::Transfer)]
    fn withholds_the_family(#[case] line: &str, #[case] code: Withheld) {
        let o = shell(line);
        assert!(o.exact, "{line}");
        assert_eq!(o.family, None, "{line}");
        assert_eq!(o.family_withheld, Some(code), "{line}");
        assert!(o.text.is_some());
    }

    #[test]
    fn chained_text_names_the_first_word() {
        assert_eq!(
            shell("npm run build && ./deploy.sh").text.as_deref(),
            Some("This line chains commands, so a rule for \"npm\" would never match it again.")
        );
        assert!(shell("ls;pwd").text.unwrap().contains("\"ls\""));
    }

    #[rstest]
    #[case("", Withheld::Empty)]
    #[case(" \t ", Withheld::Empty)]
    fn empty_lines_offer_nothing(#[case] line: &str, #[case] code: Withheld) {
        let o = shell(line);
        assert!(!o.exact);
        assert_eq!(o.exact_withheld, Some(code));
        assert_eq!(o.family_withheld, Some(code));
    }

    #[test]
    fn dangerous_and_windows_offer_nothing() {
        let o = offers_for(Tool::Shell, "rm -rf x", true, false);
        assert_eq!(o.exact_withheld, Some(Withheld::Dangerous));
        assert_eq!(o.text.as_deref(), Some(DANGEROUS_TEXT));
        let o = offers_for(Tool::Shell, "ls", false, true);
        assert!(!o.exact);
        assert_eq!(o.family_withheld, Some(Withheld::WindowsHost));
        assert_eq!(o.text.as_deref(), Some(WINDOWS_TEXT));
    }

    #[test]
    fn code_offers_exact_only_and_card_only_nothing() {
        let o = offers_for(Tool::ExecuteCode, "print(1)", false, true);
        assert!(o.exact);
        assert_eq!(o.family_withheld, Some(Withheld::Code));
        let o = offers_for(Tool::McpInstall, "server", false, false);
        assert!(!o.exact);
        assert_eq!(o.exact_withheld, Some(Withheld::CardOnly));
        assert_eq!(o.family_withheld, Some(Withheld::CardOnly));
    }
}
