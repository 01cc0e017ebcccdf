import ArgumentParser
import GraphHost

HeadlessToolkits.prepare()
GraphHostCommand.main()
