/* placeholder, replaced by the CLI author */
