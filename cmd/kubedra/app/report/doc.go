// Package report renders kubedra's results for people and machines. It is
// the only package that imports lipgloss and colorprofile, and it neither
// filters nor computes findings: commands hand it finished data.
//
// Scan renders a plan.Report (scan's result) as table, wide, json or yaml.
// The check formats (sarif, junit, markdown, github) render a Check.
//
// Colour is decided once, by ColorProfile, following kubedra's policy
// (STYLE §4): --color=always|never wins, then a non-empty NO_COLOR means
// never, then a non-empty CLICOLOR_FORCE means always, then colour only
// when the output is a terminal. Renderers style text with lipgloss and
// write through Writer, which downsamples (or strips) escapes to that
// profile. lipgloss styles always emit ANSI, so writing styled text
// anywhere else would leak escapes into pipes.
//
// Machine formats (json, yaml) are complete even when nothing was found:
// empty lists, never null, and no timestamps, so output is stable.
package report
