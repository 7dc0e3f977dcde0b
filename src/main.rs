use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = egirl::cli::Cli::parse();
    egirl::tools::sandbox::hide_own_environment();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("egirl: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let code = runtime.block_on(egirl::cli::run(cli));
    // The browser tool's Chromiums end with egirl, however its run ended.
    egirl::tools::builtin::browser::close_all();
    // Don't wait for stuck blocking reads (stdin) on the way out.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    std::process::ExitCode::from(code)
}
