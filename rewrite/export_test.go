package rewrite

// SetEntrySplice turns the entry splice on or off and returns the number
// of documents it has spliced so far (for the external tests).
func SetEntrySplice(on bool) int64 {
	entrySplice = on
	return entrySplices.Load()
}
