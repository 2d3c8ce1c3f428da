"""What every layer may use: safe readers of outside files and text, paths, the config, logging, child processes."""
