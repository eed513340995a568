package fusefs

// coreRules maps the sentinels of package fs to errno (filled in once the
// core publishes them).
func coreRules() []errnoRule { return nil }
