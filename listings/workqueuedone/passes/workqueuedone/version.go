package workqueuedone

// Version is this analyzer's release, as its archive's README names it and
// workqueuedone -V prints it.
const Version = "v0.1.0"
