package tune

// storedClass is the numerics class a cell's result records for job
// candidate jc: its own, or for the A/A twin (which runs the reference's
// kernel and is planned without one) the class of the candidate it twins.
func storedClass(job CellJob, jc JobCandidate) string {
	if jc.Class != "" || !jc.AA {
		return jc.Class
	}
	for _, c := range job.Candidates {
		if !c.AA && !c.Vendor && c.Family == jc.Family && c.Tile+AASuffix == jc.Tile {
			return c.Class
		}
	}
	return ""
}
