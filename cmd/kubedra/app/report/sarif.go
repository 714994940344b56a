package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// SARIF 2.1.0 (OASIS), the subset kubedra writes. GitHub code scanning
// accepts it as uploaded by github/codeql-action/upload-sarif: one run,
// tool.driver with rules, results with ruleId, level, message and a
// physical location whose URI is relative to the repository root.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool      `json:"tool"`
	Results    []sarifResult  `json:"results"`
	ColumnKind string         `json:"columnKind"`
	Properties map[string]any `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     sarifText          `json:"shortDescription"`
	FullDescription      sarifText          `json:"fullDescription"`
	Help                 sarifHelp          `json:"help"`
	HelpURI              string             `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           map[string]any     `json:"properties,omitempty"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints,omitempty"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]any     `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
	Region           *sarifRegion     `json:"region,omitempty"`
}

type sarifArtifactLoc struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

// SARIF writes c as a SARIF 2.1.0 log with one run. Every rule that a
// result uses is described in tool.driver.rules with help text; a report
// without findings is a valid log with an empty results list, which code
// scanning accepts (and which closes earlier alerts).
func SARIF(w io.Writer, c Check) error {
	driver := sarifDriver{Name: c.Tool.Name, Version: c.Tool.Version, InformationURI: c.Tool.InformationURI, Rules: []sarifRule{}}
	if driver.Name == "" {
		driver.Name = "kubedra"
	}
	ruleIndex := map[string]int{}
	addRule := func(r sarifRule) int {
		if i, ok := ruleIndex[r.ID]; ok {
			return i
		}
		ruleIndex[r.ID] = len(driver.Rules)
		driver.Rules = append(driver.Rules, r)
		return ruleIndex[r.ID]
	}
	results := []sarifResult{}
	for i, it := range c.Report.Findings {
		failing := c.failing(i)
		id := it.RuleID()
		vendor := plan.Vendor(it.Resource)
		if u := it.Mapping.Upgrade; u != nil {
			vendor = u.Rule
		}
		if g := it.Mapping.Govern; g != nil {
			vendor = g.What
		}
		idx := addRule(statusRule(id, it.Status, vendor))
		r := sarifResult{
			RuleID: id, RuleIndex: idx, Level: sarifLevel(failing, it),
			Message:             sarifText{Text: it.Message()},
			Locations:           sarifLocations(it),
			PartialFingerprints: map[string]string{"kubedraFinding/v1": fingerprint(it)},
			Properties: map[string]any{
				"status": string(it.Status), "resource": it.Resource, "failsGate": failing,
			},
		}
		if u := it.Mapping.Upgrade; u != nil {
			r.Properties["upgrade"] = u
		}
		if g := it.Mapping.Govern; g != nil {
			r.Properties["governance"] = g
		}
		if it.Ignored != "" {
			r.Suppressions = []sarifSuppression{{Kind: "inSource", Status: "accepted", Justification: it.Ignored}}
		}
		results = append(results, r)
		if it.IgnoreInvalid {
			idx := addRule(ignoreReasonRule())
			results = append(results, sarifResult{
				RuleID: plan.IgnoreReasonRuleID, RuleIndex: idx, Level: "error",
				Message:             sarifText{Text: workload(it) + ": " + plan.IgnoreReasonMessage},
				Locations:           sarifLocations(it),
				PartialFingerprints: map[string]string{"kubedraFinding/v1": fingerprint(it) + "/ignore"},
			})
		}
	}
	log := sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool:       sarifTool{Driver: driver},
			Results:    results,
			ColumnKind: "unicodeCodePoints",
			Properties: map[string]any{"failOn": c.FailOn, "summary": c.Report.Summary},
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

// sarifLevel is a result's level: error when it fails the gate, else its
// status's (an ignored result keeps it: its suppression says it is
// ignored).
func sarifLevel(failing bool, it plan.Item) string {
	switch s := statusSeverity(it); {
	case failing:
		return "error"
	case s == inventory.Info:
		return "note"
	default:
		return string(s)
	}
}

func statusRule(id string, s rules.Status, vendor string) sarifRule {
	short := map[rules.Status]string{
		rules.Mappable:       "Device-plugin request that kubedra can migrate to DRA",
		rules.Lossy:          "Device-plugin request whose DRA mapping is lossy",
		rules.Unmapped:       "Device-plugin request that no rule maps to DRA",
		rules.DRABacked:      "Extended resource already served by DRA",
		rules.DRAUpgrade:     "Manifest written for an earlier DRA that the target stops serving",
		rules.Governance:     "Object that counts or governs devices (quota, LimitRange, queue)",
		rules.HelmValues:     "Device request set in a Helm values file, which kubedra does not edit",
		rules.CustomResource: "Device request set in a custom resource outside any pod template, which kubedra does not edit",
		rules.NoDevice:       "Request of zero devices, which migrate removes",
	}[s]
	if short == "" {
		short = "Device request found by kubedra"
	}
	help := statusHelp(s)
	level := "warning"
	if s == rules.DRABacked || s == rules.Governance || s == rules.NoDevice {
		level = "note"
	}
	name := strings.NewReplacer("-", " ", ".", " ").Replace(string(s) + " " + vendor)
	return sarifRule{
		ID:                   id,
		Name:                 camel(name),
		ShortDescription:     sarifText{Text: short + " (" + vendor + ")"},
		FullDescription:      sarifText{Text: help},
		Help:                 sarifHelp{Text: help, Markdown: "**" + short + "** (`" + vendor + "`)\n\n" + help + "\n\nSee [kubedra in CI](" + docsURI + ")."},
		HelpURI:              docsURI,
		DefaultConfiguration: sarifConfiguration{Level: level},
		Properties:           map[string]any{"tags": []string{"kubernetes", "dra", string(s)}},
	}
}

func ignoreReasonRule() sarifRule {
	help := "A kubedra.io/ignore annotation opts a workload out of kubedra check, and its value must say why (it is shown in reports). An empty value does not ignore anything."
	return sarifRule{
		ID:                   plan.IgnoreReasonRuleID,
		Name:                 "IgnoreWithoutReason",
		ShortDescription:     sarifText{Text: "kubedra.io/ignore annotation without a reason"},
		FullDescription:      sarifText{Text: help},
		Help:                 sarifHelp{Text: help, Markdown: help},
		HelpURI:              docsURI,
		DefaultConfiguration: sarifConfiguration{Level: "error"},
	}
}

// camel turns "unmapped nvidia com" into "UnmappedNvidiaCom" (SARIF rule
// names are identifiers).
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Fields(s) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// sarifLocations locates a finding by file, line and column, plus the
// object and container as a logical location. Findings read from stdin
// have no artifact to point at, only the logical location.
func sarifLocations(it plan.Item) []sarifLocation {
	loc := sarifLocation{LogicalLocations: []sarifLogicalLocation{{
		Name:               it.Container,
		FullyQualifiedName: strings.TrimSpace(workload(it)) + "/" + it.Container,
		Kind:               "object",
	}}}
	if it.File != "" && it.File != "-" {
		loc.PhysicalLocation = &sarifPhysicalLocation{ArtifactLocation: artifact(it.File)}
		if it.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: it.Line, StartColumn: max(it.Column, 0)}
		}
	}
	return []sarifLocation{loc}
}

// artifact turns a file path into a SARIF artifact location: a relative
// URI reference against %SRCROOT% for relative paths (what code scanning
// resolves against the checkout), a file: URI for absolute ones.
func artifact(file string) sarifArtifactLoc {
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) || strings.HasPrefix(p, "/") {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // C:/x -> /C:/x
		}
		return sarifArtifactLoc{URI: (&url.URL{Scheme: "file", Path: p}).String()}
	}
	p = displayPath(p)
	p = strings.TrimPrefix(p, "./")
	return sarifArtifactLoc{URI: (&url.URL{Path: p}).String(), URIBaseID: "%SRCROOT%"}
}

// fingerprint identifies a finding across commits without its line, so
// that code scanning keeps one alert when lines move.
func fingerprint(it plan.Item) string {
	parts := []string{displayPath(it.File), it.Kind, it.Namespace, it.Name, it.PodTemplatePath, string(it.ContainerType), it.Container, it.Resource}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}
