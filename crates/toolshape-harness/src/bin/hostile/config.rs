//! The hostile server's command line (see `hostile_server.rs` for what
//! each flag does).

/// Tools per `tools/list` page unless `--page-size` says otherwise.
const DEFAULT_PAGE_SIZE: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unknown {
    Result,
    Error,
}

pub(crate) struct Config {
    pub(crate) legacy_only: bool,
    /// `--silent-discover`: `server/discover` never answered.
    pub(crate) silent_discover: bool,
    /// `--offer REVISION`: the one revision `initialize` agrees to, whatever
    /// was asked (`server/discover` refused).
    pub(crate) offer: Option<String>,
    pub(crate) page_size: usize,
    pub(crate) canary_port: u16,
    pub(crate) unknown: Unknown,
    pub(crate) duplicate: bool,
    /// `--foreign-names`: see [`super::tools::FOREIGN_TOOLS`].
    pub(crate) foreign_names: bool,
    pub(crate) check_defects: bool,
    pub(crate) no_tools_capability: bool,
    /// Its 2026-07-28 listings do not name it in `_meta`.
    pub(crate) unnamed: bool,
    pub(crate) cursor_loop: bool,
    /// `--endless BYTES`: pages of new tools without end, each description
    /// `BYTES` long.
    pub(crate) endless: Option<usize>,
    /// `--slow-pages MS`: each `tools/list` page answered MS ms late.
    pub(crate) slow_pages: Option<u64>,
    /// `--list-changed-every MS`.
    pub(crate) list_changed_every: Option<u64>,
    /// `--count-lists FILE`: the number of `tools/list` requests, kept in FILE.
    pub(crate) count_lists: Option<String>,
    /// List in reverse order (`--unstable`, on every other start).
    pub(crate) reversed: bool,
    /// `--surface`: resources and prompts too (see `hostile/surface.rs`).
    pub(crate) surface: bool,
    /// `--batches`: on 2025-03-26, each answer after the handshake goes in a
    /// JSON-RPC batch, behind a log message.
    pub(crate) batches: bool,
    /// `--die-on-initialize REVISION`: exits at once when `initialize`
    /// asks for REVISION.
    pub(crate) die_on_initialize: Option<String>,
}

/// The starts counted in `path` before this one (`flag` names it in an
/// error); this one is counted too.
fn starts_before(flag: &str, path: &str) -> Result<u64, String> {
    let starts: u64 = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    std::fs::write(path, (starts + 1).to_string()).map_err(|e| format!("{flag} {path}: {e}"))?;
    Ok(starts)
}

pub(crate) fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        legacy_only: false,
        silent_discover: false,
        offer: None,
        page_size: DEFAULT_PAGE_SIZE,
        canary_port: 9,
        unknown: Unknown::Result,
        duplicate: false,
        foreign_names: false,
        check_defects: false,
        no_tools_capability: false,
        unnamed: false,
        cursor_loop: false,
        endless: None,
        slow_pages: None,
        list_changed_every: None,
        count_lists: None,
        reversed: false,
        surface: false,
        batches: false,
        die_on_initialize: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--legacy-only" => config.legacy_only = true,
            "--silent-discover" => config.silent_discover = true,
            "--offer" => config.offer = Some(value("--offer")?),
            "--duplicate" => config.duplicate = true,
            "--foreign-names" => config.foreign_names = true,
            "--check-defects" => config.check_defects = true,
            "--no-tools-capability" => config.no_tools_capability = true,
            "--unnamed" => config.unnamed = true,
            "--cursor-loop" => config.cursor_loop = true,
            "--surface" => config.surface = true,
            "--batches" => config.batches = true,
            "--die-on-initialize" => {
                config.die_on_initialize = Some(value("--die-on-initialize")?);
            }
            "--endless" => {
                let bytes = value("--endless")?;
                config.endless = Some(bytes.parse().map_err(|e| format!("--endless: {e}"))?);
            }
            "--slow-pages" => {
                let ms = value("--slow-pages")?;
                config.slow_pages = Some(ms.parse().map_err(|e| format!("--slow-pages: {e}"))?);
            }
            "--list-changed-every" => {
                let ms = value("--list-changed-every")?;
                config.list_changed_every = Some(
                    ms.parse()
                        .map_err(|e| format!("--list-changed-every: {e}"))?,
                );
            }
            "--count-lists" => config.count_lists = Some(value("--count-lists")?),
            // Every other start.
            "--unstable" => {
                config.reversed = starts_before("--unstable", &value("--unstable")?)? % 2 == 1;
            }
            // Started a third time or more (`toolshape check` starts a
            // server twice before its first call: to list, and to list
            // again for stability): each page 1 s late.
            "--slow-restarts" => {
                if starts_before("--slow-restarts", &value("--slow-restarts")?)? >= 2 {
                    config.slow_pages = Some(1000);
                }
            }
            "--page-size" => {
                config.page_size = value("--page-size")?
                    .parse::<usize>()
                    .map_err(|e| format!("--page-size: {e}"))?
                    .max(1);
            }
            "--canary-port" => {
                config.canary_port = value("--canary-port")?
                    .parse()
                    .map_err(|e| format!("--canary-port: {e}"))?;
            }
            "--unknown-tool" => {
                config.unknown = match value("--unknown-tool")?.as_str() {
                    "result" => Unknown::Result,
                    "error" => Unknown::Error,
                    other => return Err(format!("--unknown-tool: {other:?} is not result|error")),
                };
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(config)
}
